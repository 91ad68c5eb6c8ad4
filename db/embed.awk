# embed.awk: turns db/schema.sql into a C string (db/schema_sql.c) so that
# the schema has one source and the library needs no file at run time.
BEGIN {
    print "/* schema_sql.c: generated from db/schema.sql by db/embed.awk; do not edit. */"
    print "const char db_schema_sql[] ="
}
{
    gsub(/\\/, "\\\\")
    gsub(/"/, "\\\"")
    print "    \"" $0 "\\n\""
}
END { print "    \"\";" }
