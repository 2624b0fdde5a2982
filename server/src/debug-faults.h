// Fault injection for tests (internal): INFERD_DEBUG_FAULTS="site:N[,site:N…]" makes the batch
// loop's fault hook throw at every N-th call at that site: "admit" and "token" throw
// std::runtime_error (as a failing sink or detokenizer would), "step" throws std::bad_alloc before
// a decode (as a failed allocation would). INFERD_DEBUG_STEP_DELAY_MS=N (1..10000) makes every
// decode step wait N ms first, so that tests can act while a request is still generating (stop
// it, watch it stream) however fast the model is. Both unset or empty: no hook.
//
// Usage:
//   bp.fault_hook = debug_fault_hook_from_env(*log);  // logs what it injects, warns on bad text
#pragma once

#include <functional>
#include <string_view>

namespace spdlog {
class logger;
}

std::function<void(std::string_view site)> debug_fault_hook_from_env(spdlog::logger & log);
