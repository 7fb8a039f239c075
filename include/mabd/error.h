// Error types thrown at the API boundary.
#pragma once

#include <stdexcept>
#include <string>

namespace mabd {

/// Base of every error mabd throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Invalid user input to the C++ API (degenerate shape, non-positive dt, NaN, ...).
/// The message names the item and what is wrong.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// A scene file could not be read or is invalid. what() is one line of the form
/// "FILE: ITEM: what is wrong".
class SceneError : public Error {
 public:
  using Error::Error;
};

/// The simulation diverged (non-finite state, runaway deformation). what() names the step,
/// the body and the quantity. The world state is left at the last valid step.
class SimulationError : public Error {
 public:
  using Error::Error;
};

}  // namespace mabd
