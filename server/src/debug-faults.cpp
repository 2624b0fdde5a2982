// INFERD_DEBUG_FAULTS: the batch loop's fault hook from the environment (debug-faults.h).
#include "debug-faults.h"

#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

constexpr std::array<std::string_view, 3> k_sites = {"admit", "token", "step"};

struct fault_plan {
    std::array<uint64_t, k_sites.size()> every{};  // 0: never
    std::array<std::atomic<uint64_t>, k_sites.size()> calls{};
};

// "site:N" into plan; false for an unknown site or an N outside 1..10^9.
bool parse_item(std::string_view item, fault_plan & plan) {
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) return false;
    const std::string_view site = item.substr(0, colon);
    const std::string n_text(item.substr(colon + 1));
    char * end = nullptr;
    const long long n = std::strtoll(n_text.c_str(), &end, 10);
    if (n_text.empty() || *end != '\0' || n < 1 || n > 1'000'000'000) return false;
    for (size_t i = 0; i < k_sites.size(); ++i) {
        if (k_sites[i] == site) {
            plan.every[i] = uint64_t(n);
            return true;
        }
    }
    return false;
}

// The step delay of INFERD_DEBUG_STEP_DELAY_MS in ms; 0 when unset or not 1..10000.
long step_delay_ms(spdlog::logger & log) {
    const char * v = std::getenv("INFERD_DEBUG_STEP_DELAY_MS");
    if (!v || !*v) return 0;
    char * end = nullptr;
    const long ms = std::strtol(v, &end, 10);
    if (*end != '\0' || ms < 1 || ms > 10000) {
        log.warn("INFERD_DEBUG_STEP_DELAY_MS={} ignored (expected 1..10000)", v);
        return 0;
    }
    log.warn("every decode step waits {} ms first (INFERD_DEBUG_STEP_DELAY_MS)", ms);
    return ms;
}

// The hook of INFERD_DEBUG_FAULTS; empty when unset.
std::function<void(std::string_view)> fault_hook(spdlog::logger & log) {
    const char * v = std::getenv("INFERD_DEBUG_FAULTS");
    if (!v || !*v) return {};
    auto plan = std::make_shared<fault_plan>();
    std::string_view text(v);
    while (!text.empty()) {
        const size_t comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        if (!parse_item(item, *plan)) {
            log.warn("INFERD_DEBUG_FAULTS: '{}' ignored (expected admit:N, token:N or step:N, N >= 1)", item);
        }
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    }
    log.warn("injecting faults (INFERD_DEBUG_FAULTS={})", v);
    return [plan](std::string_view site) {
        for (size_t i = 0; i < k_sites.size(); ++i) {
            if (k_sites[i] != site || plan->every[i] == 0) continue;
            const uint64_t k = ++plan->calls[i];
            if (k % plan->every[i] != 0) return;
            if (site == "step") throw std::bad_alloc();
            throw std::runtime_error("injected fault at " + std::string(site) + " #" + std::to_string(k));
        }
    };
}

}  // namespace

std::function<void(std::string_view)> debug_fault_hook_from_env(spdlog::logger & log) {
    std::function<void(std::string_view)> faults = fault_hook(log);
    const long delay = step_delay_ms(log);
    if (delay == 0) return faults;
    return [faults, delay](std::string_view site) {
        if (site == "step") std::this_thread::sleep_for(std::chrono::milliseconds(delay));
        if (faults) faults(site);
    };
}
