// Expects a builder call to throw BuildError naming the things involved.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "vlog/module.hpp"

namespace kaleido::vlog::testing {

// Expects `f` to throw BuildError whose message contains every fragment.
template <typename F>
void expect_error(F f, std::initializer_list<const char*> fragments) {
  try {
    f();
    ADD_FAILURE() << "no BuildError thrown";
  } catch (const BuildError& e) {
    for (const char* frag : fragments) EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << e.what();
  }
}

}  // namespace kaleido::vlog::testing
