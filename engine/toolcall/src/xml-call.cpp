// xml-call.cpp — families that write each parameter as a tag with its value raw: qwen3-coder-xml,
// seed-oss, minimax-xml, deepseek-dsml, glm, minicpm-xml. String values stream as they are
// written; other values (by the tool's schema, or DSML's string="false") are read as JSON or
// Python literals once the closing tag is there (a value that reads as neither stays a string).
#include "engine.h"

#include <algorithm>

namespace toolcall::detail {

namespace {

struct xml_format {
    std::string section_close{};           // "" when calls are not wrapped
    std::string call_open{};               // before the name; "" (glm): the name follows the section marker
    std::vector<std::string> name_ends{};  // after the name
    bool name_stops_at_tag = false;        // glm: "name\n<arg_key>" or "name<arg_key>"
    std::string call_close{};              // "" (glm): the section's closing marker ends the call
    std::string param_open{};
    std::string param_name_end{};
    std::string param_attrs_end{};         // dsml: string="true|false" between the name and this
    std::string value_open{};              // glm: <arg_value>
    std::string param_close{};
};

constexpr std::string_view cdata_open = "<![CDATA[";
const std::string cdata_close = "]]>";

class xml_calls_block : public call_block {
public:
    xml_calls_block(const xml_format & f, bool in_call) : f_(f), in_call_(in_call), st_(in_call ? st::name : st::section) {}

    progress step(context & ctx, size_t & cur) override {
        for (;;) {
            progress p = step_once(ctx, cur);
            if (p != progress::done || st_ == st::finished) return p;
        }
    }
    bool committed() const override { return calls_ > 0 || call_.begun(); }
    size_t abort(context & ctx, size_t cur) override;

private:
    enum class st : uint8_t { section, name, params, param_name, param_attrs, value_open, value_newline, value_cdata, value_body, value_close, finished };

    progress step_once(context & ctx, size_t & cur);
    progress step_section(context & ctx, size_t & cur);
    progress step_name(context & ctx, size_t & cur);
    progress step_params(context & ctx, size_t & cur);
    progress step_value_start(context & ctx, size_t & cur);
    progress step_value_body(context & ctx, size_t & cur);
    void emit_raw(context & ctx, size_t from, size_t to);

    xml_format f_;
    bool in_call_;
    st st_;
    std::string tool_;
    std::string key_;
    std::string attrs_;
    bool first_param_ = true;
    bool raw_ = false;    // the value streams as a string
    bool cdata_ = false;
    size_t value_start_ = 0;
    size_t emitted_ = 0;  // raw value text sent so far ends here
    size_t scan_from_ = 0;
    pending_call call_;
    size_t call_start_ = 0;  // where the current call's opening tag is
    int calls_ = 0;
};

progress xml_calls_block::step_once(context & ctx, size_t & cur) {
    std::string text;
    size_t which = 0;
    switch (st_) {
        case st::section: return step_section(ctx, cur);
        case st::name: return step_name(ctx, cur);
        case st::params: return step_params(ctx, cur);
        case st::param_name:
        case st::param_attrs: {
            const std::string & end = st_ == st::param_name ? f_.param_name_end : f_.param_attrs_end;
            match m = read_until(ctx, cur, {end}, text, which);
            if (m != match::yes) return m == match::more ? progress::more : progress::fail;
            if (st_ == st::param_name) {
                key_ = trim(text);
                attrs_.clear();
            } else {
                attrs_ = text;
            }
            st_ = st_ == st::param_name && !f_.param_attrs_end.empty() ? st::param_attrs : st::value_open;
            return progress::done;
        }
        case st::value_open:
        case st::value_newline:
        case st::value_cdata: return step_value_start(ctx, cur);
        case st::value_body: return step_value_body(ctx, cur);
        case st::value_close: {
            match m = match_after_space(ctx, cur, f_.param_close);
            if (m == match::more) return progress::more;
            st_ = st::params;
            return progress::done;
        }
        case st::finished: return progress::done;
    }
    return progress::fail;
}

// Between calls of a section: the next call, the section's end, or (after a call) anything else.
progress xml_calls_block::step_section(context & ctx, size_t & cur) {
    if (f_.call_open.empty()) {
        st_ = calls_ == 0 ? st::name : st::finished;
        return progress::done;
    }
    call_start_ = cur;
    match m = match_after_space(ctx, cur, f_.call_open);
    if (m == match::more) return progress::more;
    if (m == match::yes) {
        st_ = st::name;
        return progress::done;
    }
    if (!f_.section_close.empty()) {
        m = match_after_space(ctx, cur, f_.section_close);
        if (m == match::more) return progress::more;
        if (m == match::yes) {
            st_ = st::finished;
            return progress::done;
        }
    }
    if (calls_ == 0) return progress::fail;
    st_ = st::finished;
    return progress::done;
}

progress xml_calls_block::step_name(context & ctx, size_t & cur) {
    std::string text;
    size_t which = 0;
    match m = f_.name_stops_at_tag ? read_until(ctx, cur, {"\n", "<"}, text, which, 256, true)
                                   : read_until(ctx, cur, f_.name_ends, text, which);
    if (m != match::yes) return m == match::more ? progress::more : progress::fail;
    if (f_.name_stops_at_tag && which == 0) ++cur;  // the newline after the name
    tool_ = trim(text);
    if (!valid_name(tool_)) return progress::fail;
    call_.open("", tool_);  // it goes out at its first parameter or its end
    call_.args(ctx, "{");
    first_param_ = true;
    st_ = st::params;
    return progress::done;
}

progress xml_calls_block::step_params(context & ctx, size_t & cur) {
    size_t c = skip_space(ctx, cur);
    if (c == ctx.buf.size()) return ctx.at_end ? progress::fail : progress::more;
    match m = match_literal(ctx, c, f_.param_open);
    if (m == match::more) return progress::more;
    if (m == match::yes) {
        cur = c;
        st_ = st::param_name;
        return progress::done;
    }
    const std::string & close = f_.call_close.empty() ? f_.section_close : f_.call_close;
    m = match_literal(ctx, c, close);
    if (m != match::yes) return m == match::more ? progress::more : progress::fail;
    cur = c;
    call_.args(ctx, "}");
    call_.end(ctx);
    ++calls_;
    st_ = f_.call_close.empty() || in_call_ ? st::finished : st::section;
    return progress::done;
}

// The value's opening tag, one leading newline, a CDATA opener; then the key goes out.
progress xml_calls_block::step_value_start(context & ctx, size_t & cur) {
    if (st_ == st::value_open) {
        if (!f_.value_open.empty()) {
            match m = match_after_space(ctx, cur, f_.value_open);
            if (m != match::yes) return m == match::more ? progress::more : progress::fail;
        }
        if (attrs_.find("string=\"true\"") != std::string::npos) {
            raw_ = true;
        } else if (attrs_.find("string=\"false\"") != std::string::npos) {
            raw_ = false;
        } else {
            raw_ = ctx.schemas.is_string(tool_, key_);
        }
        std::string key = first_param_ ? "\"" : ", \"";
        json_escape_append(key_, key);
        key += "\": ";
        call_.commit(ctx);
        call_.args(ctx, key);
        first_param_ = false;
        st_ = st::value_newline;
    }
    if (st_ == st::value_newline) {
        if (cur == ctx.buf.size() && !ctx.at_end) return progress::more;
        if (cur < ctx.buf.size() && ctx.buf[cur] == '\n') ++cur;
        st_ = st::value_cdata;
    }
    match m = match_literal(ctx, cur, cdata_open);
    if (m == match::more) return progress::more;
    cdata_ = m == match::yes;
    if (cdata_) raw_ = true;
    value_start_ = emitted_ = scan_from_ = cur;
    if (raw_) ctx.out.call_args("\"");
    st_ = st::value_body;
    return progress::done;
}

void xml_calls_block::emit_raw(context & ctx, size_t from, size_t to) {
    if (to <= from) return;
    std::string s;
    json_escape_append(std::string_view(ctx.buf).substr(from, to - from), s);
    ctx.out.call_args(s);
}

progress xml_calls_block::step_value_body(context & ctx, size_t & cur) {
    const std::string & close = cdata_ ? cdata_close : f_.param_close;
    size_t hit = ctx.buf.find(close, scan_from_);
    if (hit == std::string::npos) {
        scan_from_ = std::max(emitted_, ctx.buf.size() - std::min(ctx.buf.size(), close.size()));
        if (!raw_) return progress::more;
        size_t safe = ctx.buf.size() - partial_marker_suffix(std::string_view(ctx.buf).substr(emitted_), {close});
        if (!cdata_ && safe > emitted_ && ctx.buf[safe - 1] == '\n') --safe;  // maybe the newline before the tag
        emit_raw(ctx, emitted_, safe);
        emitted_ = safe;
        return progress::more;
    }
    size_t end = hit;
    if (!cdata_ && end > value_start_ && ctx.buf[end - 1] == '\n') --end;
    if (raw_) {
        emit_raw(ctx, emitted_, end);
        ctx.out.call_args("\"");
    } else {
        std::string_view text = std::string_view(ctx.buf).substr(value_start_, end - value_start_);
        std::string js;
        if (!literal_to_json(text, js)) {
            js.assign(1, '"');
            json_escape_append(text, js);
            js += '"';
        }
        ctx.out.call_args(js);
    }
    cur = hit + close.size();
    st_ = cdata_ ? st::value_close : st::params;
    cdata_ = false;
    return progress::done;
}

size_t xml_calls_block::abort(context & ctx, size_t cur) {
    if (!call_.begun()) return call_.active() ? call_start_ : cur;  // that call's text is content
    if (st_ == st::value_body) {  // cut inside a value: it keeps what was written
        if (raw_) {
            emit_raw(ctx, emitted_, ctx.buf.size());
            ctx.out.call_args("\"");
        } else {
            std::string js = "\"";
            json_escape_append(std::string_view(ctx.buf).substr(value_start_), js);
            ctx.out.call_args(js + "\"");
        }
        cur = ctx.buf.size();
    } else if (st_ == st::value_newline || st_ == st::value_cdata) {
        ctx.out.call_args("null");
    }
    ctx.out.call_args("}");
    call_.end(ctx);
    return cur;
}

xml_format function_equals(std::string section_close) {
    return xml_format{.section_close = std::move(section_close),
                      .call_open = "<function=",
                      .name_ends = {">"},
                      .call_close = "</function>",
                      .param_open = "<parameter=",
                      .param_name_end = ">",
                      .param_close = "</parameter>"};
}

xml_format invoke_name(const std::string & prefix, std::string section_close) {  // "" or "｜DSML｜"
    const bool attrs = !prefix.empty();  // DSML: name="k" string="true"
    return xml_format{.section_close = std::move(section_close),
                      .call_open = "<" + prefix + "invoke name=\"",
                      .name_ends = {"\">"},
                      .call_close = "</" + prefix + "invoke>",
                      .param_open = "<" + prefix + "parameter name=\"",
                      .param_name_end = std::string(attrs ? "\"" : "\">"),
                      .param_attrs_end = std::string(attrs ? ">" : ""),
                      .param_close = "</" + prefix + "parameter>"};
}

std::unique_ptr<machine> xml_machine(family fam, xml_format f, std::vector<trigger> triggers) {
    tagged_machine::spec s;
    s.reasoning = family_reasoning(fam);
    s.triggers = std::move(triggers);
    return std::make_unique<tagged_machine>(std::move(s), [f = std::move(f)](int kind) {
        return std::make_unique<xml_calls_block>(f, kind == 1);
    });
}

}  // namespace

std::unique_ptr<machine> make_xml_family(family fam) {
    switch (fam) {
        case family::qwen3_coder_xml:
            return xml_machine(fam, function_equals("</tool_call>"), {{"<tool_call>", 0}, {"<function=", 1}});
        case family::seed_oss:
            return xml_machine(fam, function_equals("</seed:tool_call>"), {{"<seed:tool_call>", 0}, {"<function=", 1}});
        case family::minimax_xml:
            return xml_machine(fam, invoke_name("", "</minimax:tool_call>"),
                               {{"<minimax:tool_call>", 0}, {"<invoke name=\"", 1}});
        case family::deepseek_dsml:
            return xml_machine(fam, invoke_name("｜DSML｜", "</｜DSML｜function_calls>"),
                               {{"<｜DSML｜function_calls>", 0}, {"<｜DSML｜invoke name=\"", 1}});
        case family::glm:
            return xml_machine(fam,
                               xml_format{.section_close = "</tool_call>",
                                          .name_stops_at_tag = true,
                                          .param_open = "<arg_key>",
                                          .param_name_end = "</arg_key>",
                                          .value_open = "<arg_value>",
                                          .param_close = "</arg_value>"},
                               {{"<tool_call>", 0}});
        case family::minicpm_xml:
            return xml_machine(fam,
                               xml_format{.call_open = "<function name=\"",
                                          .name_ends = {"\">"},
                                          .call_close = "</function>",
                                          .param_open = "<param name=\"",
                                          .param_name_end = "\">",
                                          .param_close = "</param>"},
                               {{"<function name=\"", 1}, {"<tool_sep>"}});
        default: return nullptr;
    }
}

}  // namespace toolcall::detail
