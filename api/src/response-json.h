// api/src/response-json.h — JSON pieces shared by the response serialisers (private).
#pragma once

#include "api/response-common.h"

#include "json-write.h"

#include <string>

ojson api_usage_json(const api_usage & u);
// {"id","object","created","model"} — the head of every generation response.
ojson api_meta_json(const api_response_meta & m, const char * object);
// The finish reason as a string, or null for none.
ojson api_finish_reason_json(api_finish_reason r);
// A token's bytes as an array of integers 0..255.
ojson api_bytes_json(const std::string & s);
