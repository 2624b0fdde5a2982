// The daemon's logger: text or JSON lines.
#include "server/log.h"

#include "server/http-server.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace {

// %* : the message as a JSON value (embedded when it is an object, quoted otherwise).
class json_message_flag final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg & msg, const std::tm &, spdlog::memory_buf_t & dest) override {
        const std::string_view v(msg.payload.data(), msg.payload.size());
        const std::string out = !v.empty() && v.front() == '{' && v.back() == '}' ? std::string(v) : http_json_quote(v);
        dest.append(out.data(), out.data() + out.size());
    }
    std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<json_message_flag>(); }
};

}  // namespace

std::shared_ptr<spdlog::logger> server_make_logger(bool json) {
    auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
    auto log = std::make_shared<spdlog::logger>("inferd", sink);
    if (json) {
        auto f = std::make_unique<spdlog::pattern_formatter>();
        f->add_flag<json_message_flag>('*').set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","msg":%*})");
        log->set_formatter(std::move(f));
    } else {
        log->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
    }
    return log;
}
