// Umbrella header for the mabd library.
#pragma once

#include "mabd/batch.h"
#include "mabd/body.h"
#include "mabd/error.h"
#include "mabd/ids.h"
#include "mabd/math.h"
#include "mabd/robotics.h"
#include "mabd/scene.h"
#include "mabd/settings.h"
#include "mabd/shape.h"
#include "mabd/soft_body.h"
#include "mabd/world.h"
