// api/constraint-read.cpp — structured output: response_format, json_schema and grammar.
#include "generation-read.h"

#include "json-span.h"

#include <stdexcept>

#include <vector>

namespace {

// A constraint found in the request. A schema stays in the body until the end (path names where),
// so that it can be taken with its keys in the order the client wrote them.
struct constraint_source {
    api_constraint_kind kind = api_constraint_kind::none;
    std::string param;               // "response_format", "json_schema" or "grammar"
    std::string text;                // GBNF text, or a fixed schema when path is empty
    std::vector<const char *> path;  // the schema's place in the body
};

const char * schema_forms = "a JSON Schema (an object or a boolean)";
const char * type_forms = "one of \"text\", \"json_object\" or \"json_schema\"";

bool is_schema_value(const nlohmann::json & v) { return v.is_object() || v.is_boolean(); }

void require(json_reader & r, const char * key, const std::string & why) {
    r.fail(api_error_invalid_request(api_cat({"'", r.param(key), "' is required", why, "."}), r.param(key)));
}

// {"type":"json_schema","json_schema":{"name","schema","strict","description"}}
void read_json_schema_format(json_reader & rf, constraint_source & out) {
    const nlohmann::json * js = rf.find("json_schema");
    if (!js) {
        require(rf, "json_schema", " when 'response_format.type' is \"json_schema\"");
        return;
    }
    if (!js->is_object()) {
        rf.fail("json_schema", "an object with 'name' and 'schema'");
        return;
    }
    json_reader inner(*js, rf.param("json_schema."));
    std::string name, description;
    bool strict = false;
    inner.string("name", name);
    inner.string("description", description);
    inner.boolean("strict", strict);
    const nlohmann::json * schema = inner.error() ? nullptr : inner.find("schema");
    if (!inner.error() && !schema) {
        require(inner, "schema", "");
    } else if (schema && !is_schema_value(*schema)) {
        inner.fail("schema", std::string(schema_forms) + ", got " + json_type_name(*schema));
    }
    if (inner.error()) {
        rf.fail(*inner.error());
        return;
    }
    out.kind = api_constraint_kind::json_schema;
    out.path = {"response_format", "json_schema", "schema"};
}

void read_response_format(json_reader & r, constraint_source & out) {
    const nlohmann::json * v = r.error() ? nullptr : r.find("response_format");
    if (!v) {
        return;
    }
    if (!v->is_object()) {
        r.fail("response_format", "an object such as {\"type\":\"json_object\"}");
        return;
    }
    json_reader rf(*v, r.param("response_format."));
    const nlohmann::json * type = rf.find("type");
    const std::string t = type && type->is_string() ? type->get<std::string>() : "";
    out.param = "response_format";
    if (t == "text") {
        return;
    }
    if (t == "json_object") {
        // llama-server's extension: a "schema" member narrows "any object" to that schema.
        const nlohmann::json * schema = rf.find("schema");
        out.kind = api_constraint_kind::json_schema;
        if (!schema) {
            out.text = R"({"type":"object"})";
        } else if (is_schema_value(*schema)) {
            out.path = {"response_format", "schema"};
        } else {
            rf.fail("schema", std::string(schema_forms) + ", got " + json_type_name(*schema));
        }
    } else if (t == "json_schema") {
        read_json_schema_format(rf, out);
    } else if (!type) {
        require(rf, "type", std::string(" (") + type_forms + ")");
    } else {
        const std::string got = type->is_string()
                                    ? api_cat({"\"", std::string_view(t).substr(0, 40), t.size() > 40 ? "…" : "", "\""})
                                    : std::string(json_type_name(*type));
        rf.fail("type", std::string(type_forms) + ", got " + got);
    }
    if (rf.error()) {
        r.fail(*rf.error());
    }
}

// The schema's JSON text with its keys in the body's order (the body was parsed into a map that
// sorts keys; a schema's properties must keep the order the client declared), cut from the body.
std::string schema_text(std::string_view body, const std::vector<const char *> & path) {
    std::string pointer;
    for (const char * key : path) {
        pointer += '/';
        pointer += key;
    }
    std::optional<std::string> text = json_compact_text_at(body, pointer);
    if (!text) {  // the reader found it in the same body: not reached
        throw std::runtime_error(api_cat({"the request body has no value at ", pointer}));
    }
    return std::move(*text);
}

}  // namespace

void api_read_constraint(json_reader & r, std::string_view body, api_constraint & out) {
    std::vector<constraint_source> found;
    constraint_source rf;
    read_response_format(r, rf);
    if (rf.kind != api_constraint_kind::none) {
        found.push_back(std::move(rf));
    }
    const nlohmann::json * js = r.error() ? nullptr : r.find("json_schema");
    if (js && !is_schema_value(*js)) {
        r.fail("json_schema", std::string(schema_forms) + ", got " + json_type_name(*js));
    } else if (js) {
        found.push_back({api_constraint_kind::json_schema, "json_schema", "", {"json_schema"}});
    }
    std::string grammar;
    r.string("grammar", grammar);
    if (!grammar.empty()) {
        found.push_back({api_constraint_kind::gbnf, "grammar", std::move(grammar), {}});
    }
    if (r.error() || found.empty()) {
        return;
    }
    if (found.size() > 1) {
        r.fail(api_error_invalid_request(api_cat({"'", found[0].param, "' and '", found[1].param,
                                                  "' cannot be used together: a request constrains its output with "
                                                  "one of 'response_format', 'json_schema' and 'grammar'."}),
                                         found[1].param));
        return;
    }
    constraint_source & c = found[0];
    out.kind = c.kind;
    out.source_param = c.param;
    out.text = c.path.empty() ? std::move(c.text) : schema_text(body, c.path);
}
