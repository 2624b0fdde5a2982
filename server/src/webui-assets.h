// The files of webui/ as compiled into the daemon: written at build time by
// cmake/embed-webui.cmake into webui-assets.cpp (sorted by name; README.md left out).
#pragma once

#include <cstddef>

struct webui_asset {
    const char * name;  // the file's name in webui/, e.g. "app.js"
    const unsigned char * data;
    size_t size;
};

extern const webui_asset webui_assets[];
extern const size_t webui_asset_count;
