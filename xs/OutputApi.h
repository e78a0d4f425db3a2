/* What Handles (xs/Handles.xs) calls to open and close a request's STDOUT on its output, and
 * Output (xs/OutputLayer.c) provides, found through PL_modglobal under OUTPUT_API_KEY: the
 * two are separate shared objects, and this is their one interface. */
#ifndef PERENNIAL_OUTPUT_API_H
#define PERENNIAL_OUTPUT_API_H

#define OUTPUT_API_KEY "Perennial::Executor::Output::api"

struct output_api {
    int (*attach)(pTHX_ IO *io, SV *out);    /* io gets a handle on out; false, with errno */
    int (*detach)(pTHX_ IO *io, SV *out);    /* Ends io's handle on out; true: a file of its own */
    int (*idle)(pTHX_ IO *io);               /* Whether io is free for a request's STDOUT */
};

#endif
