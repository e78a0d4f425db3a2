/* What the loop in C (xs/LoopLog.c) calls to make an access log's line, and the access log's
 * format (xs/Format.xs) provides, found through PL_modglobal under FORMAT_API_KEY: the two are
 * separate shared objects, and this is their one interface. The loop gives the request's
 * values as they are, and the format asks for the record its Perl fields read (the hash that
 * Perennial::Log::Format's `line` takes) only when a field of the format has no C. */
#ifndef PERENNIAL_FORMAT_API_H
#define PERENNIAL_FORMAT_API_H

#define FORMAT_API_KEY "Perennial::Log::Format::api"

/* A request's values, as a line reads them; a NULL SV is an undefined value */
struct log_values {
    HV *env;                                   /* The request's PSGI environment */
    SV *status, *bytes, *micros, *keep_alive;    /* As the record's keys of those names */
    SV *record;                                /* The record once made (a reference) */
    SV *(*make_record)(pTHX_ void *ctx);       /* Makes it: a mortal reference */
    void *ctx;
};

struct format_api {
    HV *stash;    /* Perennial::Log::Format's: a format of another class is asked its `line` */
    /* The format's line for these values, with its newline: an SV the format keeps and reuses,
     * to be written before the next line is asked for */
    SV *(*line)(pTHX_ SV *format, struct log_values *values);
};

#endif
