// server/log.h — the daemon's logger (spdlog, stderr): text lines, or with json one JSON object
// per line: {"time":…,"level":…,"msg":…}, where a message that is itself a JSON object (the HTTP
// access lines) is embedded as an object and any other message is a JSON string.
//
// Usage:
//   std::shared_ptr<spdlog::logger> log = server_make_logger(/*json=*/false);
//   log->info("listening on {}", addr);
#pragma once

#include <memory>

namespace spdlog {
class logger;
}

std::shared_ptr<spdlog::logger> server_make_logger(bool json);
