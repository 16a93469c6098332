#pragma once
// An environment knob of the engine (read when a kernel is recorded) set for one variant of a bench while it records,
// and restored after, also when recording throws.
#include <cstdlib>
#include <optional>
#include <string>

namespace sdgen::bench {

class ScopedKnob {
 public:
  // on: `name` = `value` until destruction; off: nothing changes.
  ScopedKnob(const char* name, const char* value, bool on) : name_(name), on_(on) {
    if (!on_) return;
    if (const char* v = std::getenv(name_)) old_ = v;
    setenv(name_, value, 1);
  }
  ~ScopedKnob() {
    if (!on_) return;
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedKnob(const ScopedKnob&) = delete;
  ScopedKnob& operator=(const ScopedKnob&) = delete;

 private:
  const char* name_;
  bool on_;
  std::optional<std::string> old_;
};

}  // namespace sdgen::bench
