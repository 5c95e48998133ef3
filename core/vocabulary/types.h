#pragma once
// Basic vocabulary shared by every part of the engine.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace shardlens {

// A user-facing input problem (bad file, bad flag value). The message names the file or
// flag and says what is wrong; the CLI prints it and exits 2, the GUI shows a dialog.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown when a Progress sink asks the engine to stop.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled") {}
};

}  // namespace shardlens
