// test-deploy-files.cpp — keeps deploy/ (Dockerfile, systemd unit and environment file,
// Kubernetes manifests) true to the daemon: every INFERD_* variable they name is a real setting,
// the values they set parse, every flag on a command line is accepted, the probes ask /health on
// the port inferd listens on, the stop timeouts exceed the drain time, and the real inferd comes
// up with exactly the ConfigMap's and the environment file's settings (model and address swapped
// for a test model on a loopback port), answering the container's health check.
//
// The files are read from INFERD_SOURCE_DIR/deploy; INFERD_BIN is the daemon (tests/CMakeLists.txt).
#include "config/config.h"
#include "server/inferd-process.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using env_list = std::vector<std::pair<std::string, std::string>>;  // in file order

std::string deploy_path(const std::string & rel) { return std::string(INFERD_SOURCE_DIR) + "/deploy/" + rel; }

std::string read_deploy_file(const std::string & rel) {
    std::ifstream in(deploy_path(rel));
    EXPECT_TRUE(in.good()) << "cannot read " << deploy_path(rel);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> split_lines(const std::string & text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::string unquote(std::string s) {
    s = trim(s);
    if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front()) return s.substr(1, s.size() - 2);
    return s;
}

// Every INFERD_* name in the text, comments included, except CMake definitions (-DINFERD_CUDA=OFF).
std::set<std::string> inferd_names_in(const std::string & text) {
    std::set<std::string> names;
    const std::regex re("INFERD_[A-Z0-9_]+");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
        const size_t pos = size_t(it->position());
        if (pos >= 2 && text.compare(pos - 2, 2, "-D") == 0) continue;
        names.insert(it->str());
    }
    return names;
}

std::set<std::string> config_env_names() {
    std::set<std::string> names;
    for (const config_flag_doc & f : config_flags()) {
        if (!f.env_name.empty()) names.insert(f.env_name);
    }
    return names;
}

// config_parse with these variables (and flags); *text gets the message.
config_status parse_with(const env_list & env, const std::vector<std::string> & args, server_config * cfg, std::string * text) {
    config_env e;
    for (const auto & [k, v] : env) e[k] = v;
    return config_parse(args, e, cfg, text);
}

std::vector<std::string> as_env_strings(const env_list & env) {
    std::vector<std::string> out;
    for (const auto & [k, v] : env) out.push_back(k + "=" + v);
    return out;
}

// ---- Dockerfile ------------------------------------------------------------------------------

// The instructions, continuation lines joined and comments dropped: {"ENV", "INFERD_HOST=... "}.
std::vector<std::pair<std::string, std::string>> dockerfile_instructions(const std::string & text) {
    std::vector<std::pair<std::string, std::string>> out;
    std::string cur;
    for (const std::string & raw : split_lines(text)) {
        const std::string l = trim(raw);
        if (l.empty() || l[0] == '#') continue;
        const bool more = l.back() == '\\';
        cur += (cur.empty() ? "" : " ") + (more ? trim(l.substr(0, l.size() - 1)) : l);
        if (more) continue;
        const size_t sp = cur.find(' ');
        out.emplace_back(cur.substr(0, sp), sp == std::string::npos ? "" : trim(cur.substr(sp + 1)));
        cur.clear();
    }
    return out;
}

std::vector<std::string> dockerfile_all(const std::string & text, const std::string & instruction) {
    std::vector<std::string> out;
    for (const auto & [ins, arg] : dockerfile_instructions(text)) {
        if (ins == instruction) out.push_back(arg);
    }
    return out;
}

env_list dockerfile_env(const std::string & text) {
    env_list env;
    for (const std::string & arg : dockerfile_all(text, "ENV")) {
        std::istringstream in(arg);
        for (std::string kv; in >> kv;) {
            const size_t eq = kv.find('=');
            if (eq != std::string::npos) env.emplace_back(kv.substr(0, eq), unquote(kv.substr(eq + 1)));
        }
    }
    return env;
}

// ---- systemd -------------------------------------------------------------------------------------

// KEY=VALUE lines of an environment file (comments and commented-out examples skipped).
env_list env_file_assignments(const std::string & text) {
    env_list env;
    for (const std::string & raw : split_lines(text)) {
        const std::string l = trim(raw);
        if (l.empty() || l[0] == '#') continue;
        const size_t eq = l.find('=');
        if (eq != std::string::npos) env.emplace_back(trim(l.substr(0, eq)), unquote(l.substr(eq + 1)));
    }
    return env;
}

// Every value of KEY= in a unit file, in order.
std::vector<std::string> unit_values(const std::string & text, const std::string & key) {
    std::vector<std::string> out;
    for (const std::string & raw : split_lines(text)) {
        const std::string l = trim(raw);
        if (l.rfind(key + "=", 0) == 0) out.push_back(trim(l.substr(key.size() + 1)));
    }
    return out;
}

std::string unit_value(const std::string & text, const std::string & key) {
    const auto v = unit_values(text, key);
    EXPECT_EQ(v.size(), 1u) << key << "= should appear once in the unit";
    return v.empty() ? "" : v.back();
}

// A systemd time span such as "45s", "45", "2min", "1min 30s" in seconds; nullopt if not one.
std::optional<double> systemd_seconds(const std::string & span) {
    static const std::regex part("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(ms|sec|s|min|m|h)?\\s*");
    const std::map<std::string, double> unit = {{"", 1}, {"s", 1}, {"sec", 1}, {"ms", 0.001}, {"min", 60}, {"m", 60}, {"h", 3600}};
    double total = 0;
    auto it = span.cbegin();
    std::smatch m;
    if (span.empty()) return std::nullopt;
    while (it != span.cend()) {
        if (!std::regex_search(it, span.cend(), m, part, std::regex_constants::match_continuous) || m.length(0) == 0) {
            return std::nullopt;
        }
        total += std::stod(m[1]) * unit.at(m[2]);
        it = m[0].second;
    }
    return total;
}

// ---- YAML (the few shapes the manifests use; indentation decides nesting) ----------------------

int indent_of(const std::string & l) { return int(l.find_first_not_of(' ')); }

bool is_yaml_content(const std::string & l) {
    const std::string t = trim(l);
    return !t.empty() && t[0] != '#';
}

// The lines nested under the first "key:" line at or after `from` (deeper indentation).
std::vector<std::string> yaml_block(const std::vector<std::string> & lines, const std::string & key, size_t from = 0) {
    for (size_t i = from; i < lines.size(); ++i) {
        std::string t = trim(lines[i]);
        if (t.rfind("- ", 0) == 0) t = trim(t.substr(2));
        if (!is_yaml_content(lines[i]) || t.rfind(key + ":", 0) != 0) continue;
        const int base = indent_of(lines[i]);
        std::vector<std::string> out;
        for (size_t j = i + 1; j < lines.size(); ++j) {
            if (!is_yaml_content(lines[j])) continue;
            if (indent_of(lines[j]) <= base) break;
            out.push_back(lines[j]);
        }
        return out;
    }
    return {};
}

// The scalar of the first "key: value" line in the lines ("" when absent), quotes removed.
std::string yaml_scalar(const std::vector<std::string> & lines, const std::string & key) {
    for (const std::string & raw : lines) {
        if (!is_yaml_content(raw)) continue;
        std::string t = trim(raw);
        if (t.rfind("- ", 0) == 0) t = trim(t.substr(2));
        if (t.rfind(key + ":", 0) != 0) continue;
        std::string v = t.substr(key.size() + 1);
        if (const size_t c = v.find(" #"); c != std::string::npos) v = v.substr(0, c);
        return unquote(v);
    }
    return "";
}

// The "KEY: value" pairs under data: of the ConfigMap.
env_list configmap_data(const std::string & text) {
    env_list env;
    for (const std::string & l : yaml_block(split_lines(text), "data")) {
        const std::string t = trim(l);
        const size_t colon = t.find(':');
        if (colon != std::string::npos) env.emplace_back(t.substr(0, colon), unquote(t.substr(colon + 1)));
    }
    return env;
}

void replace_env(env_list & env, const std::string & key, const std::string & value) {
    for (auto & [k, v] : env) {
        if (k == key) v = value;
    }
}

std::string env_value(const env_list & env, const std::string & key) {
    for (const auto & [k, v] : env) {
        if (k == key) return v;
    }
    return "";
}

// The container's health check (deploy/docker-healthcheck) against 127.0.0.1:port: its exit status.
int run_healthcheck(uint16_t port) {
    const std::string cmd = "INFERD_PORT=" + std::to_string(port) + " bash '" + deploy_path("docker-healthcheck") + "' 2>/dev/null";
    const int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

TEST(deploy_files, every_inferd_variable_named_is_a_setting) {
    const std::set<std::string> known = config_env_names();
    ASSERT_TRUE(known.count("INFERD_MODEL"));  // the table is the one the daemon parses with
    for (const char * rel : {"Dockerfile", "docker-healthcheck", "systemd/inferd.env", "systemd/inferd.service",
                             "kubernetes/configmap.yaml", "kubernetes/deployment.yaml"}) {
        const std::set<std::string> names = inferd_names_in(read_deploy_file(rel));
        EXPECT_FALSE(names.empty()) << rel;
        for (const std::string & n : names) EXPECT_TRUE(known.count(n)) << rel << " names " << n << ", which inferd does not read";
    }
}

TEST(deploy_files, dockerfile_defaults_parse_and_match_expose_and_entrypoint) {
    const std::string text = read_deploy_file("Dockerfile");
    const env_list env = dockerfile_env(text);
    server_config cfg;
    std::string msg;
    ASSERT_EQ(parse_with(env, {}, &cfg, &msg), config_status::ok) << msg;
    EXPECT_EQ(cfg.host, "0.0.0.0");
    EXPECT_EQ(cfg.port, 8080);
    EXPECT_EQ(cfg.model_path, "/models/model.gguf");
    EXPECT_EQ(dockerfile_all(text, "EXPOSE"), std::vector<std::string>{std::to_string(cfg.port)});
    EXPECT_EQ(dockerfile_all(text, "ENTRYPOINT"), std::vector<std::string>{"[\"inferd\"]"});
    EXPECT_EQ(dockerfile_all(text, "STOPSIGNAL"), std::vector<std::string>{"SIGTERM"});
    EXPECT_EQ(dockerfile_all(text, "VOLUME"), std::vector<std::string>{"[\"/models\"]"});
    // No CMD: arguments after the image name go to inferd as flags, and none are preset here.
    EXPECT_TRUE(dockerfile_all(text, "CMD").empty());
    // Non-root, and the health check is the script that is copied in.
    const auto user = dockerfile_all(text, "USER");
    ASSERT_EQ(user.size(), 1u);
    EXPECT_NE(user[0].rfind("0", 0), 0u);
    EXPECT_NE(user[0].rfind("root", 0), 0u);
    const auto health = dockerfile_all(text, "HEALTHCHECK");
    ASSERT_EQ(health.size(), 1u);
    EXPECT_NE(health[0].find("/usr/local/bin/inferd-healthcheck"), std::string::npos);
    EXPECT_NE(text.find("COPY deploy/docker-healthcheck /usr/local/bin/inferd-healthcheck"), std::string::npos);
}

TEST(deploy_files, systemd_unit_and_env_file_agree_with_the_daemon) {
    const std::string unit = read_deploy_file("systemd/inferd.service");
    const env_list env = env_file_assignments(read_deploy_file("systemd/inferd.env"));
    for (const auto & [k, v] : env) EXPECT_EQ(k.rfind("INFERD_", 0), 0u) << "inferd.env sets " << k;

    // ExecStart: the daemon, and every flag after it parses together with the environment file.
    std::istringstream exec(unit_value(unit, "ExecStart"));
    std::string bin;
    exec >> bin;
    EXPECT_EQ(std::filesystem::path(bin).filename(), "inferd");
    std::vector<std::string> args;
    for (std::string a; exec >> a;) args.push_back(a);
    server_config cfg;
    std::string msg;
    ASSERT_EQ(parse_with(env, args, &cfg, &msg), config_status::ok) << msg;

    EXPECT_EQ(unit_value(unit, "Type"), "simple");  // inferd has no sd_notify
    EXPECT_EQ(unit_value(unit, "Restart"), "on-failure");
    EXPECT_EQ(unit_value(unit, "RestartPreventExitStatus"), std::to_string(config_exit_code(config_status::usage_error)));
    EXPECT_EQ(unit_value(unit, "KillSignal"), "SIGTERM");
    EXPECT_EQ(unit_value(unit, "EnvironmentFile"), "/etc/inferd/inferd.env");
    const auto stop = systemd_seconds(unit_value(unit, "TimeoutStopSec"));
    ASSERT_TRUE(stop.has_value());
    EXPECT_GT(*stop, cfg.shutdown_timeout.count() / 1000.0) << "TimeoutStopSec must exceed INFERD_SHUTDOWN_TIMEOUT";
    // The model lies under a path the unit can read (ProtectSystem=strict keeps it read-only).
    const std::string model_dir = std::filesystem::path(cfg.model_path).parent_path().string();
    EXPECT_EQ(unit_value(unit, "ReadOnlyPaths"), model_dir);
    EXPECT_EQ(unit_value(unit, "ProtectSystem"), "strict");
    EXPECT_EQ(unit_value(unit, "NoNewPrivileges"), "yes");
    EXPECT_FALSE(unit_value(unit, "User").empty());
}

TEST(deploy_files, systemd_time_span_parser) {
    EXPECT_EQ(systemd_seconds("45s"), 45.0);
    EXPECT_EQ(systemd_seconds("45"), 45.0);
    EXPECT_EQ(systemd_seconds("1min 30s"), 90.0);
    EXPECT_FALSE(systemd_seconds("infinity").has_value());
    EXPECT_FALSE(systemd_seconds("").has_value());
}

TEST(deploy_files, kubernetes_probes_ports_and_grace_period) {
    const env_list env = configmap_data(read_deploy_file("kubernetes/configmap.yaml"));
    server_config cfg;
    std::string msg;
    ASSERT_EQ(parse_with(env, {}, &cfg, &msg), config_status::ok) << msg;
    EXPECT_EQ(cfg.host, "0.0.0.0");
    const std::string port = std::to_string(cfg.port);

    const std::vector<std::string> dep = split_lines(read_deploy_file("kubernetes/deployment.yaml"));
    const auto container_ports = yaml_block(dep, "ports");
    EXPECT_EQ(yaml_scalar(container_ports, "name"), "http");
    EXPECT_EQ(yaml_scalar(container_ports, "containerPort"), port);
    EXPECT_EQ(yaml_scalar(yaml_block(dep, "configMapRef"), "name"), "inferd");
    EXPECT_TRUE(yaml_block(dep, "args").empty()) << "settings go through the ConfigMap; flags in args would need checking here";
    for (const char * probe : {"startupProbe", "readinessProbe", "livenessProbe"}) {
        const auto block = yaml_block(dep, probe);
        ASSERT_FALSE(block.empty()) << probe;
        EXPECT_EQ(yaml_scalar(block, "path"), "/health") << probe;
        const std::string p = yaml_scalar(block, "port");
        EXPECT_TRUE(p == "http" || p == port) << probe << " port " << p;
    }
    const auto annotations = yaml_block(dep, "annotations");
    EXPECT_EQ(yaml_scalar(annotations, "prometheus.io/scrape"), "true");
    EXPECT_EQ(yaml_scalar(annotations, "prometheus.io/port"), port);
    EXPECT_EQ(yaml_scalar(annotations, "prometheus.io/path"), "/metrics");

    // Grace period > drain time + the preStop pause.
    const double grace = std::stod(yaml_scalar(dep, "terminationGracePeriodSeconds"));
    double pre_stop = 0;
    std::smatch m;
    const std::string pre_stop_text = [&] {
        std::string s;
        for (const std::string & l : yaml_block(dep, "preStop")) s += l + "\n";
        return s;
    }();
    if (std::regex_search(pre_stop_text, m, std::regex("\"sleep\",\\s*\"([0-9]+)\""))) pre_stop = std::stod(m[1]);
    EXPECT_GT(grace, cfg.shutdown_timeout.count() / 1000.0 + pre_stop);

    const std::vector<std::string> svc = split_lines(read_deploy_file("kubernetes/service.yaml"));
    const auto svc_ports = yaml_block(svc, "ports");
    EXPECT_EQ(yaml_scalar(svc_ports, "name"), "http");
    EXPECT_EQ(yaml_scalar(svc_ports, "port"), port);
    EXPECT_EQ(yaml_scalar(svc_ports, "targetPort"), "http");
}

TEST(deploy_files, yaml_helpers_follow_indentation) {
    const std::vector<std::string> lines = {"a:", "  b:", "    path: /x  # note", "  c: '1'", "d:", "  path: /y"};
    EXPECT_EQ(yaml_block(lines, "b").size(), 1u);
    EXPECT_EQ(yaml_scalar(yaml_block(lines, "b"), "path"), "/x");
    EXPECT_EQ(yaml_scalar(yaml_block(lines, "a"), "c"), "1");
    EXPECT_EQ(yaml_scalar(yaml_block(lines, "d"), "path"), "/y");
    EXPECT_TRUE(yaml_block(lines, "e").empty());
}

// The daemon with exactly the ConfigMap's settings; the test model and a loopback port instead
// (inferd_process passes --host 127.0.0.1 --port 0, which beat the environment).
TEST(deploy_files, inferd_starts_with_the_configmap_environment) {
    INFERD_REQUIRE_TESTDATA(dir);
    env_list env = configmap_data(read_deploy_file("kubernetes/configmap.yaml"));
    replace_env(env, "INFERD_MODEL", dir + "/models/stories260K-f32.gguf");
    replace_env(env, "INFERD_HOST", "127.0.0.1");
    replace_env(env, "INFERD_PORT", "0");
    inferd_process p({}, as_env_strings(env));
    ASSERT_TRUE(p.wait_ready()) << p.log();
    EXPECT_EQ(run_healthcheck(p.port()), 0) << "the container's health check should pass once /health is 200";
    auto m = inferd_call(p.port(), "GET", "/metrics");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->status, 200);
    EXPECT_NE(m->body.find("inferd_requests_total"), std::string::npos);
    if (env_value(env, "INFERD_LOG_FORMAT") == "json") {
        EXPECT_NE(p.log().find("{\"time\""), std::string::npos) << "INFERD_LOG_FORMAT=json should give JSON lines:\n" << p.log();
    }
    const uint16_t port = p.port();
    EXPECT_EQ(p.terminate(), 0) << p.log();
    EXPECT_EQ(run_healthcheck(port), 1) << "nothing listens any more";
}

TEST(deploy_files, inferd_starts_with_the_systemd_environment_file) {
    INFERD_REQUIRE_TESTDATA(dir);
    env_list env = env_file_assignments(read_deploy_file("systemd/inferd.env"));
    replace_env(env, "INFERD_MODEL", dir + "/models/stories260K-f32.gguf");
    replace_env(env, "INFERD_PORT", "0");
    inferd_process p({}, as_env_strings(env));
    ASSERT_TRUE(p.wait_ready()) << p.log();
    EXPECT_EQ(p.terminate(), 0) << p.log();
}

// While the model loads, /health is 503 and the container's health check fails.
TEST(deploy_files, healthcheck_fails_while_the_model_loads) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/stories260K-f32.gguf"}, {"INFERD_DEBUG_LOAD_DELAY_MS=600000"});
    ASSERT_TRUE(p.wait_listening()) << p.log();
    auto h = inferd_call(p.port(), "GET", "/health");
    ASSERT_TRUE(h.has_value());
    EXPECT_EQ(h->status, 503);
    EXPECT_EQ(run_healthcheck(p.port()), 1);
    EXPECT_EQ(p.terminate(), 0) << p.log();
}
