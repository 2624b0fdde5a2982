// Rendering with variables given one by one (jinja::render_vars, the values read where they
// are): the same text as with a context object holding them, a later name replacing an earlier
// one, and the render's limits still applying to the values.
#include "jinja/jinja.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using ojson = nlohmann::ordered_json;

const char * k_template =
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    "{% if tools %}[{% for t in tools %}{{ t | tojson }};{% endfor %}]{% endif %}"
    "{% if add_generation_prompt %}<assistant>{% endif %}{{ extra | default('-') }}";

TEST(JinjaRenderVars, RendersAsTheContextObjectDoes) {
    const jinja::parsed_template t = jinja::parse(k_template);
    const ojson messages = ojson::parse(R"([{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}])");
    const ojson tools = ojson::parse(R"([{"z":1,"a":{"y":[true,null],"b":"s"}}])");
    const ojson yes = true, extra = "x";
    ojson ctx = ojson::object();
    ctx["messages"] = messages;
    ctx["tools"] = tools;
    ctx["add_generation_prompt"] = yes;
    ctx["extra"] = extra;
    const std::string expected = jinja::render(t, ctx);
    EXPECT_EQ(expected, R"(<user>hi<assistant>yo[{"z": 1, "a": {"y": [true, null], "b": "s"}};]<assistant>x)");
    const jinja::render_vars vars = {{"messages", &messages}, {"tools", &tools}, {"add_generation_prompt", &yes}, {"extra", &extra}};
    EXPECT_EQ(jinja::render_with(t, vars), expected);
    EXPECT_EQ(jinja::render_with(t, jinja::render_vars{}), "-") << "no variables: all undefined";
}

TEST(JinjaRenderVars, ALaterNameReplacesAnEarlierOne) {
    const jinja::parsed_template t = jinja::parse("{{ a }}");
    const ojson one = 1, two = "two";
    EXPECT_EQ(jinja::render_with(t, jinja::render_vars{{"a", &one}, {"a", &two}}), "two");
}

TEST(JinjaRenderVars, TheLimitsApplyToTheValues) {
    ojson deep = ojson::array();
    ojson * at = &deep;
    for (int i = 0; i < 2000; ++i) at = &(at->emplace_back(ojson::array()));
    jinja::render_options o;
    o.bounds.max_value_depth = 64;
    const jinja::render_vars vars = {{"v", &deep}};
    EXPECT_THROW(jinja::render_with(jinja::parse("{{ v | length }}"), vars, o), jinja::error);
    while (!deep.empty()) {  // taken apart from the top (its destructor would recurse 2,000 deep)
        ojson inner = std::move(deep[0]);
        deep = std::move(inner);
    }
}

}  // namespace
