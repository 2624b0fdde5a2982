// tests/server/npm-work.h — a folder in the build tree where npm packages are installed once and
// Node scripts of the tests run (real clients: the openai package, a browser driven by
// playwright-core).
//
// Usage:
//   const std::string work = npm_work_prepare(INFERD_NPM_DIR, {here / "client-test.mjs"}, {"openai@4"});
//   if (work.empty()) GTEST_SKIP() << "…";       // already failed under CI=true, with the reason
//   std::string out;
//   int rc = npm_work_run(work, "node client-test.mjs 8080", &out);
#pragma once

#include "testdata.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

inline bool npm_work_have(const char * tool) {
    return std::system((std::string("command -v ") + tool + " > /dev/null 2>&1").c_str()) == 0;
}

inline std::string npm_work_read(const std::filesystem::path & p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// `work` with every package of `packages` ("name@range") installed and `files` copied in (by
// their names); "" after skipping (a failure under CI=true) with the reason.
inline std::string npm_work_prepare(const std::filesystem::path & work, const std::vector<std::filesystem::path> & files,
                                    const std::vector<std::string> & packages) {
    if (!npm_work_have("node") || !npm_work_have("npm")) {
        if (inferd_running_in_ci()) ADD_FAILURE() << "node and npm are required under CI=true";
        return "";
    }
    std::filesystem::create_directories(work);
    for (const std::filesystem::path & f : files) {
        std::filesystem::copy_file(f, work / f.filename(), std::filesystem::copy_options::overwrite_existing);
    }
    std::string missing, all;
    for (const std::string & p : packages) {
        const std::string name = p.substr(0, p.rfind('@'));
        if (!std::filesystem::exists(work / "node_modules" / name / "package.json")) missing += " " + p;
        all += " '" + p + "'";
    }
    if (missing.empty()) return work.string();
    const std::string cmd = "cd '" + work.string() + "' && npm install --no-audit --no-fund --silent" + all + " > npm.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {
        if (inferd_running_in_ci()) ADD_FAILURE() << "npm install" << missing << " failed (see " << (work / "npm.log") << ")";
        return "";
    }
    return work.string();
}

// Runs `command` in `work` with its output in work/client.log; the exit status, the output in *out.
inline int npm_work_run(const std::string & work, const std::string & command, std::string * out) {
    const std::string cmd = "cd '" + work + "' && " + command + " > client.log 2>&1";
    const int rc = std::system(cmd.c_str());
    *out = npm_work_read(std::filesystem::path(work) / "client.log");
    return rc;
}
