// api/chat-tools-read.cpp — a chat request's tools and tool_choice, and the tool calls of its
// assistant messages.
#include "chat-tools-read.h"

#include "grammar/json-ordered-read.h"
#include "json-span.h"

#include <algorithm>
#include <stdexcept>

namespace {

const char * tool_forms = "an object {\"type\":\"function\",\"function\":{\"name\",\"description\",\"parameters\"}}";
const char * call_forms = "an object {\"id\",\"type\":\"function\",\"function\":{\"name\",\"arguments\"}}";
const char * choice_forms =
    "\"none\", \"auto\", \"required\" or {\"type\":\"function\",\"function\":{\"name\":…}}";

void require(json_reader & r, const char * key, std::string_view why = "") {
    r.fail(api_error_invalid_request(api_cat({"'", r.param(key), "' is required", why, "."}), r.param(key)));
}

// `s` for a message, cut to 64 bytes.
std::string clipped(const std::string & s) {
    return s.size() > 64 ? s.substr(0, 64) + "…" : s;
}

// "type": "function" — required in a tool, optional in a call.
void read_function_type(json_reader & r, bool required) {
    const nlohmann::json * type = r.error() ? nullptr : r.find("type");
    if (!type && required && !r.error()) {
        require(r, "type", " (\"function\")");
    } else if (type && (!type->is_string() || type->get_ref<const std::string &>() != "function")) {
        r.fail("type", api_cat({"\"function\", got ", json_value_text(*type)}));
    }
}

// The "function" member: an object, required. nullptr when absent or invalid (r failed).
const nlohmann::json * function_member(json_reader & r, const char * forms) {
    const nlohmann::json * fn = r.error() ? nullptr : r.find("function");
    if (!fn && !r.error()) {
        require(r, "function");
    } else if (fn && !fn->is_object()) {
        r.fail("function", std::string(forms) + ", got " + json_type_name(*fn));
        return nullptr;
    }
    return fn;
}

// A call's arguments given as text: a JSON object's text becomes that object's compact text;
// any other text (not JSON, not an object, or nested too deeply) stays a JSON string of itself.
std::string arguments_from_text(const std::string & text) {
    nlohmann::ordered_json args;
    std::string error;
    if (json_read_ordered(text, json_max_depth, &args, &error) && args.is_object()) {
        return json_write(args);
    }
    return json_write(nlohmann::ordered_json(text));
}

// {"name", "arguments"} of a call; `pointer` is the call's place in the body.
void read_call_function(json_reader & r, const nlohmann::json & fn, json_ordered_body & body,
                        const std::string & pointer, api_tool_call & out) {
    json_reader rf(fn, r.param("function."));
    if (!rf.find("name")) {
        require(rf, "name");
    }
    rf.string("name", out.name);
    if (!rf.error() && out.name.empty()) {
        rf.fail("name", "a non-empty string");
    }
    const nlohmann::json * args = rf.error() ? nullptr : rf.find("arguments");
    if (!args) {
        out.arguments = "{}";
    } else if (args->is_object()) {
        out.arguments = body.text_at(pointer + "/function/arguments");
    } else if (args->is_string()) {
        out.arguments = arguments_from_text(args->get_ref<const std::string &>());
    } else {
        rf.fail("arguments", std::string("a JSON text or an object, got ") + json_value_text(*args));
    }
    if (rf.error()) {
        r.fail(*rf.error());
    }
}

void read_tool_call(json_reader & outer, const nlohmann::json & call, const std::string & at,
                    json_ordered_body & body, const std::string & pointer, api_tool_call & out) {
    if (!call.is_object()) {
        outer.fail(at, std::string(call_forms) + ", got " + json_type_name(call));
        return;
    }
    json_reader r(call, outer.param(at + "."));
    read_function_type(r, false);
    r.string("id", out.id);
    if (const nlohmann::json * fn = function_member(r, call_forms)) {
        read_call_function(r, *fn, body, pointer, out);
    }
    if (r.error()) {
        outer.fail(*r.error());
    }
}

bool valid_tool_name(const std::string & name) {
    if (name.empty() || name.size() > 64) {
        return false;
    }
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '-' || c == '.';
    });
}

// A tool's {"name","description","parameters","strict"}; its name is added to `names`.
void read_tool_function(json_reader & r, const nlohmann::json & fn, std::vector<std::string> & names) {
    json_reader rf(fn, r.param("function."));
    const nlohmann::json * name_value = rf.find("name");
    std::string name;
    if (!name_value) {
        require(rf, "name");
    }
    rf.string("name", name);
    if (!rf.error() && !valid_tool_name(name)) {
        rf.fail("name", api_cat({"1 to 64 of the characters A-Z a-z 0-9 _ - ., got ", json_value_text(*name_value)}));
    } else if (!rf.error() && std::find(names.begin(), names.end(), name) != names.end()) {
        rf.fail(api_error_invalid_request(
            api_cat({"'", rf.param("name"), "' repeats the name '", name, "': every tool needs a name of its own."}),
            rf.param("name")));
    }
    std::string description;
    rf.string("description", description);
    const nlohmann::json * parameters = rf.error() ? nullptr : rf.find("parameters");
    if (parameters && !parameters->is_object()) {
        rf.fail("parameters", std::string("a JSON Schema object, got ") + json_type_name(*parameters));
    }
    std::optional<bool> strict;
    rf.boolean("strict", strict);
    if (rf.error()) {
        r.fail(*rf.error());
        return;
    }
    names.push_back(std::move(name));
}

void read_tool(json_reader & outer, const nlohmann::json & tool, size_t i, std::vector<std::string> & names) {
    const std::string at = api_cat({"tools[", std::to_string(i), "]"});
    if (!tool.is_object()) {
        outer.fail(at, std::string(tool_forms) + ", got " + json_type_name(tool));
        return;
    }
    json_reader r(tool, outer.param(at + "."));
    read_function_type(r, true);
    if (const nlohmann::json * fn = function_member(r, tool_forms)) {
        read_tool_function(r, *fn, names);
    }
    if (r.error()) {
        outer.fail(*r.error());
    }
}

// `what` says what the choice asks for ("\"required\" needs 'tools'").
void fail_without_tools(json_reader & r, std::string_view what) {
    r.fail(api_error_invalid_request(api_cat({"'", r.param("tool_choice"), "' ", what, ", and the request has none."}),
                                     r.param("tool_choice")));
}

// {"type":"function","function":{"name":…}}: the tool the model must call.
void read_named_tool_choice(json_reader & r, const nlohmann::json & v, chat_request & req) {
    json_reader rc(v, r.param("tool_choice."));
    read_function_type(rc, true);
    const nlohmann::json * fn = function_member(rc, "an object {\"name\":…}");
    std::string name;
    if (fn) {
        json_reader rf(*fn, rc.param("function."));
        if (!rf.find("name")) {
            require(rf, "name");
        }
        rf.string("name", name);
        if (rf.error()) {
            rc.fail(*rf.error());
        }
    }
    if (rc.error()) {
        r.fail(*rc.error());
        return;
    }
    if (req.tool_names.empty()) {
        fail_without_tools(r, api_cat({"names the function '", clipped(name), "', which needs 'tools'"}));
        return;
    }
    if (std::find(req.tool_names.begin(), req.tool_names.end(), name) == req.tool_names.end()) {
        r.fail(api_error_invalid_request(api_cat({r.param("tool_choice"), " names the function '", clipped(name),
                                                  "', which is not among the tools."}),
                                         r.param("tool_choice")));
        return;
    }
    req.tool_choice = api_tool_choice::function;
    req.tool_choice_function = std::move(name);
}

void read_tool_choice(json_reader & r, chat_request & req) {
    const bool has_tools = !req.tool_names.empty();
    req.tool_choice = has_tools ? api_tool_choice::auto_ : api_tool_choice::none;
    const nlohmann::json * v = r.error() ? nullptr : r.find("tool_choice");
    if (!v) {
        return;
    }
    if (v->is_object()) {
        read_named_tool_choice(r, *v, req);
        return;
    }
    const std::string s = v->is_string() ? v->get<std::string>() : "";
    if (s == "none" || s == "auto") {
        req.tool_choice = s == "auto" && has_tools ? api_tool_choice::auto_ : api_tool_choice::none;
    } else if (s == "required" && !has_tools) {
        fail_without_tools(r, "\"required\" needs 'tools'");
    } else if (s == "required") {
        req.tool_choice = api_tool_choice::required;
    } else {
        r.fail("tool_choice", api_cat({choice_forms, ", got ", json_value_text(*v)}));
    }
}

}  // namespace

std::string json_ordered_body::text_at(const std::string & pointer) {
    constexpr int max_scans = 4;
    if (!doc_ && scans_ < max_scans) {
        ++scans_;
        std::optional<std::string> text = json_compact_text_at(text_, pointer);
        if (!text) {  // the reader found it in the same body: not reached
            throw std::runtime_error(api_cat({"the request body has no value at ", pointer}));
        }
        return std::move(*text);
    }
    if (!doc_) {
        nlohmann::ordered_json doc;  // linear in an object's keys, unlike nlohmann's ordered parse
        std::string error;
        if (!json_read_ordered(text_, json_max_depth, &doc, &error)) {  // the body was read before: not reached
            throw std::runtime_error("the request body cannot be read again: " + error);
        }
        doc_ = std::move(doc);
    }
    return json_write(doc_->at(nlohmann::ordered_json::json_pointer(pointer)));
}

void chat_read_tool_calls(json_reader & r, const nlohmann::json & calls, json_ordered_body & body,
                          const std::string & pointer, std::vector<api_tool_call> & out) {
    if (!calls.is_array()) {
        r.fail("tool_calls", std::string("an array of calls, got ") + json_type_name(calls));
        return;
    }
    std::vector<api_tool_call> read(calls.size());
    for (size_t k = 0; k < calls.size() && !r.error(); ++k) {
        const std::string index = std::to_string(k);
        read_tool_call(r, calls[k], api_cat({"tool_calls[", index, "]"}), body,
                       api_cat({pointer, "/tool_calls/", index}), read[k]);
    }
    if (!r.error()) {
        out = std::move(read);
    }
}

void chat_read_tools(json_reader & r, json_ordered_body & body, chat_request & req) {
    const nlohmann::json * v = r.error() ? nullptr : r.find("tools");
    if (v && !v->is_array()) {
        r.fail("tools", std::string("an array of tools, got ") + json_type_name(*v));
    } else if (v && !v->empty()) {
        std::vector<std::string> names;
        for (size_t i = 0; i < v->size() && !r.error(); ++i) {
            read_tool(r, (*v)[i], i, names);
        }
        if (!r.error()) {
            req.tools = body.text_at("/tools");
            req.tool_names = std::move(names);
        }
    }
    read_tool_choice(r, req);
    r.boolean("parallel_tool_calls", req.parallel_tool_calls);
}
