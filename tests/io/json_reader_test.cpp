// The JSON reader: strict parsing with located errors, and bounded "did you mean" suggestions.
#include "io/json_reader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "mabd/error.h"

namespace {

using mabd::SceneError;
using mabd::io::close_matches;
using mabd::io::closest_match;
using mabd::io::edit_distance;
using mabd::io::unknown_name_message;

std::string parse_error(const std::string& text) {
  try {
    mabd::io::parse_json_text(text, "f.json");
  } catch (const SceneError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected SceneError";
  return {};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// ---- long runs of blanks -------------------------------------------------------------------

TEST(JsonBlanks, LongRunsKeepTheirMeaningAndPositions) {
  // Runs far longer than what the lexer is passed, between tokens, before and after the value.
  const std::string run(10000, ' ');
  const mabd::io::Json value = mabd::io::parse_json_text(
      run + "{\"a\":" + run + "[1," + std::string(5000, '\n') + "2]," + run + "\"b\": \"x" +
          std::string(300, ' ') + "y\"}" + run,
      "f.json");
  EXPECT_EQ(value["a"], mabd::io::Json::array({1, 2}));
  // Blanks inside a string are data: none is dropped.
  EXPECT_EQ(value["b"].get<std::string>(), "x" + std::string(300, ' ') + "y");

  // Errors after long runs still name the right line and column.
  EXPECT_EQ(parse_error(std::string(1000, '\n') + std::string(500, ' ') + "{\"a\": x}"),
            "f.json: malformed JSON at line 1001, column 507: syntax error while parsing value "
            "- invalid literal; last read: '\"a\": x'");
  // The lexer quotes what it read since the last string: a long run of blanks shows as
  // at most a few of them, not the whole run.
  const std::string quoted = parse_error("{\"a\":" + std::string(1'000'000, ' ') + "x}");
  EXPECT_LT(quoted.size(), 250u);
  EXPECT_NE(quoted.find("column 1000006: syntax error while parsing value - invalid literal; "
                        "last read: '\"a\":  "),
            std::string::npos)
      << quoted;
  EXPECT_EQ(parse_error("{\"a\": 1," + std::string(300, ' ') + "\n" + std::string(200, '\t') +
                        "}"),
            "f.json: malformed JSON at line 2, column 201: syntax error while parsing object "
            "key - unexpected '}'; expected string literal");
}

TEST(JsonBlanks, AFileOfBlanksIsRejectedQuickly) {
  // 20 MB of blanks: the lexer used to copy, escape (8 bytes per line break) and keep every
  // one of them for a message that never shows them: 20 times the file in memory.
  std::string text;
  for (int i = 0; i < 10'000'000; ++i) text += " \n";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string message = parse_error(text);
  EXPECT_LT(seconds_since(t0), 1.0);
  EXPECT_EQ(message,
            "f.json: malformed JSON at line 10000001, column 1: syntax error while parsing value "
            "- unexpected end of input; expected '[', '{', or a literal");
}

// ---- suggestions ---------------------------------------------------------------------------

TEST(Suggestions, EditDistance) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("rdo", "rod"), 1u);       // adjacent swap
  EXPECT_EQ(edit_distance("Ball", "ball"), 0u);     // case is ignored
  EXPECT_EQ(edit_distance("abcdef", "badcfe"), 3u);
}

TEST(Suggestions, ClosestFirstAtMostTheCount) {
  const std::vector<std::string> names = {"link_10", "link_1", "lnik_1", "link_11", "other"};
  EXPECT_EQ(close_matches("link_1", names, 3),
            (std::vector<std::string>{"link_1", "link_10", "lnik_1"}));
  EXPECT_EQ(close_matches("link_1", names, 1), (std::vector<std::string>{"link_1"}));
  EXPECT_EQ(close_matches("zzzzzz", names, 3), std::vector<std::string>{});
  EXPECT_EQ(closest_match("lnk_11", names), "link_11");
  EXPECT_FALSE(closest_match("x", names));
}

TEST(Suggestions, BoundedOnAMillionNames) {
  std::vector<std::string> names;
  names.reserve(1'000'000);
  for (int i = 0; i < 1'000'000; ++i) names.push_back("chain/" + std::to_string(i));
  const auto t0 = std::chrono::steady_clock::now();
  const std::string message = unknown_name_message("body", "chain/12345x", names);
  EXPECT_LT(seconds_since(t0), 1.0);
  EXPECT_LT(message.size(), 300u) << message;
  EXPECT_EQ(message,
            "unknown body 'chain/12345x' (known: chain/0, chain/1, chain/2, chain/3, chain/4, "
            "chain/5, chain/6, chain/7, chain/8, chain/9, ... (1000000 in all)); did you mean "
            "'chain/12345', 'chain/123450' or 'chain/123451'?");
}

TEST(Suggestions, MessageShortensLongNames) {
  const std::string long_name(10000, 'a');
  const std::string message = unknown_name_message("material", long_name + "b", {long_name});
  EXPECT_LT(message.size(), 200u);
  EXPECT_EQ(message, "unknown material '" + std::string(60, 'a') + "...' (known: " +
                         std::string(60, 'a') + "...)");
  EXPECT_EQ(unknown_name_message("material", "wood", {}), "unknown material 'wood' (known: none)");
}

}  // namespace
