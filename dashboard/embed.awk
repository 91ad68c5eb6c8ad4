# embed.awk: turns the dashboard's pages (dashboard/assets/*) into C strings
# (dashboard/assets_gen.c), so that tlm-dash serves them from memory: no
# file is read per request, and no request can name one.
#   awk -f embed.awk index.html app.js app.css >assets_gen.c
function escape(s, ch,    n, parts, i, out) {
    n = split(s, parts, ch == "?" ? "[?]" : ch == "\\" ? "[\\\\]" : ch)
    out = parts[1]
    for (i = 2; i <= n; i++)
        out = out "\\" ch parts[i]
    return out
}
function flush() {
    if (n >= 0)
        print "    \"\";"
}
BEGIN {
    print "/* assets_gen.c: generated from dashboard/assets/ by dashboard/embed.awk; do not edit. */"
    print "#include <string.h>"
    print ""
    print "#include \"dashboard/dash.h\""
    n = -1
}
FNR == 1 {
    flush()
    n++
    name[n] = FILENAME
    sub(/.*\//, "", name[n])
    print "static const char asset_" n "[] ="
}
{
    # split and join rather than gsub, whose replacement escapes differ between awks
    line = escape(escape(escape($0, "\\"), "\""), "?")   # \? too: no trigraphs (C11 has them)
    print "    \"" line "\\n\""
}
END {
    flush()
    print ""
    print "const dash_asset dash_assets[] = {"
    for (i = 0; i <= n; i++) {
        type = "application/octet-stream"
        if (name[i] ~ /\.html$/) type = "text/html; charset=utf-8"
        else if (name[i] ~ /\.js$/) type = "text/javascript; charset=utf-8"
        else if (name[i] ~ /\.css$/) type = "text/css; charset=utf-8"
        print "    {\"" name[i] "\", \"" type "\", asset_" i ", sizeof asset_" i " - 1},"
    }
    print "};"
    print "const int dash_n_assets = " n + 1 ";"
    print ""
    print "const dash_asset *dash_asset_find(const char *name)"
    print "{"
    print "    for (int i = 0; i < dash_n_assets; i++)"
    print "        if (!strcmp(dash_assets[i].name, name))"
    print "            return &dash_assets[i];"
    print "    return NULL;"
    print "}"
}
