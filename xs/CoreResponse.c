/* A response's head and its one write, in C: included by Core.xs (the twins are
 * response_head and write_response in lib/Perennial/HTTP/Core.pm). */

/* Headers the server writes itself: Content-Length is read and written by the server (see
 * build_head), Transfer-Encoding and Connection are dropped (Connection: close is noted), Date
 * and Server are kept and noted */
enum { OWN_NONE, OWN_LENGTH, OWN_TE, OWN_CONNECTION, OWN_DATE, OWN_SERVER };

static int
own_header(const char *name, STRLEN len)
{
    switch (len) {
    case 4:
        if (strncasecmp(name, "date", 4) == 0) return OWN_DATE;
        break;
    case 6:
        if (strncasecmp(name, "server", 6) == 0) return OWN_SERVER;
        break;
    case 10:
        if (strncasecmp(name, "connection", 10) == 0) return OWN_CONNECTION;
        break;
    case 14:
        if (strncasecmp(name, "content-length", 14) == 0) return OWN_LENGTH;
        break;
    case 17:
        if (strncasecmp(name, "transfer-encoding", 17) == 0) return OWN_TE;
        break;
    }
    return OWN_NONE;
}

/* The bytes of a header name or value, or of a body part: a string of characters is written
 * as Latin-1 when it can be (as syswrite would); one with wider characters cannot be sent */
static const char *
bytes_of(pTHX_ SV *sv, STRLEN *len, const char *what)
{
    const char *p;
    if (!sv) sv = &PL_sv_undef;    /* An odd count: the last name has no value */
    p = SvPV_const(sv, *len);      /* Undefined: empty, with perl's warning */
    if (SvUTF8(sv)) {
        SV *copy = sv_2mortal(newSVpvn_flags(p, *len, SVf_UTF8));
        if (!sv_utf8_downgrade(copy, TRUE))
            croak("Wide character in %s\n", what);
        p = SvPV_const(copy, *len);
    }
    return p;
}

/* Appends bytes, a line break in them written as a space: a break would start a header, or a
 * body, of the client's choosing */
static void
cat_without_breaks(pTHX_ SV *out, const char *p, STRLEN len)
{
    STRLEN start = SvCUR(out), i;
    char *d;
    sv_catpvn(out, p, len);
    d = SvPVX(out) + start;
    for (i = 0; i < len; i++)
        if (d[i] == '\r' || d[i] == '\n') d[i] = ' ';
}

/* Whether an application's Content-Length value is a length: digits alone, at most 18 */
static int
is_length(const char *p, STRLEN len)
{
    STRLEN i;
    if (len == 0 || len > 18) return 0;
    for (i = 0; i < len; i++)
        if (p[i] < '0' || p[i] > '9') return 0;
    return 1;
}

static void
cat_length(pTHX_ SV *head, SV *length)
{
    STRLEN len;
    const char *p = SvPV_const(length, len);
    sv_catpvs(head, "Content-Length: ");
    sv_catpvn(head, p, len);
    sv_catpvs(head, "\r\n");
}

/* "Date: Tue, 24 Nov 2026 12:00:00 GMT\r\n", made once a second */
static const char *
date_line(void)
{
    static const char *const day[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
    static const char *const month[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    static time_t second = -1;
    static char line[64];
    time_t now = time(NULL);
    if (now != second) {
        struct tm t;
        gmtime_r(&now, &t);
        snprintf(line, sizeof line, "Date: %s, %02d %s %04d %02d:%02d:%02d GMT\r\n",
                 day[t.tm_wday], t.tm_mday, month[t.tm_mon], t.tm_year + 1900, t.tm_hour,
                 t.tm_min, t.tm_sec);
        second = now;
    }
    return line;
}

/* The head of a response (see response_head in Core.pm); sets *framing, *length (a mortal or
 * body_length, or NULL) and *keep_alive. The Content-Length line is the server's: the body's
 * own length when the whole body is known (body_length), whatever the application said (a
 * length that does not match its body would end the response early, or send bytes the client
 * reads as the next response); else the application's, when it is one number (a value that is
 * not, or two that differ, are dropped, and the body is framed as without one). For HEAD, an
 * empty body keeps the application's length (that of the body a GET would have); a 1xx, 204
 * or 304 has none (RFC 9110 8.6; Apache drops a script's there too). */
static SV *
build_head(pTHX_ SV *status_line, IV status, SV *headers, SV *body_length, IV http11,
           IV head_only, IV *keep_alive, SV *server_line, int *framing, SV **length)
{
    AV *av;
    SSize_t i, last;
    SV *out, *head;
    int has_date = 0, has_server = 0, close = 0, lengths = 0;
    const char *declared = NULL;    /* The application's one length, in its header value */
    STRLEN dlen = 0;
    STRLEN len;
    const char *p;
    if (!SvROK(headers) || SvTYPE(SvRV(headers)) != SVt_PVAV)
        croak("Not an ARRAY reference");
    av = (AV *)SvRV(headers);
    last = av_top_index(av);
    out = sv_2mortal(newSVpvs(""));
    *length = NULL;
    *framing = F_LENGTH;
    for (i = 0; i <= last; i += 2) {
        SV **name_sv = av_fetch(av, i, 0), **value_sv = av_fetch(av, i + 1, 0);
        STRLEN nlen, vlen;
        const char *name = bytes_of(aTHX_ name_sv ? *name_sv : NULL, &nlen, "a response header");
        const char *value = bytes_of(aTHX_ value_sv ? *value_sv : NULL, &vlen, "a response header");
        switch (own_header(name, nlen)) {
        case OWN_TE:
            continue;
        case OWN_CONNECTION:
            if (vlen == 5 && strncasecmp(value, "close", 5) == 0) close = 1;
            continue;
        case OWN_LENGTH:    /* Kept where it lies: an SV only if it is written (below) */
            if (!lengths++) {
                declared = is_length(value, vlen) ? value : NULL;
                dlen = vlen;
            }
            else if (declared && !(dlen == vlen && memEQ(declared, value, vlen)))
                declared = NULL;
            continue;
        case OWN_DATE:
            has_date = 1;
            break;
        case OWN_SERVER:
            has_server = 1;
            break;
        }
        cat_without_breaks(aTHX_ out, name, nlen);
        sv_catpvs(out, ": ");
        cat_without_breaks(aTHX_ out, value, vlen);
        sv_catpvs(out, "\r\n");
    }
    p = SvPV_const(status_line, len);
    head = sv_2mortal(newSV(len + SvCUR(out) + 160));
    sv_setpvn(head, p, len);
    if (!has_server) {
        p = SvPV_const(server_line, len);
        sv_catpvn(head, p, len);
    }
    sv_catsv(head, out);
    if (status < 200 || status == 204 || status == 304) *framing = F_NONE;    /* No length */
    else {
        if (body_length && SvOK(body_length) && !(head_only && declared && !SvTRUE(body_length)))
            cat_length(aTHX_ head, *length = body_length);
        else if (declared)
            cat_length(aTHX_ head, *length = sv_2mortal(newSVpvn(declared, dlen)));
        else if (head_only) *framing = F_NONE;
        else if (http11) {
            *framing = F_CHUNKED;
            sv_catpvs(head, "Transfer-Encoding: chunked\r\n");
        }
        else *framing = F_CLOSE;
    }
    if (close || *framing == F_CLOSE) *keep_alive = 0;
    if (head_only) *framing = F_NONE;
    if (!*keep_alive) sv_catpvs(head, "Connection: close\r\n");
    else if (!http11) sv_catpvs(head, "Connection: keep-alive\r\n");
    if (!has_date) sv_catpv(head, date_line());
    sv_catpvs(head, "\r\n");
    return head;
}

/* Writes a response with an array body, its head and body in one sendmsg, without waiting (a
 * client slow to take it is the caller's to wait for, within Timeout): what was written (-1,
 * errno set, on an error), the head in *head (a mortal), its framing, length and keep_alive as
 * build_head sets them, the body's length in *total (0 when the framing sends none) */
static ssize_t
send_response(pTHX_ int fd, SV *status_line, IV status, SV *headers, SV *body, IV http11,
              IV head_only, IV *keep_alive, SV *server_line, SV **head, int *framing,
              SV **length, STRLEN *total)
{
    AV *av;
    SSize_t i, last, parts;
    SV *joined = NULL, *body_length;
    STRLEN len;
    struct iovec iov[MAX_PARTS + 1];
    struct msghdr msg;
    ssize_t n;

    if (!SvROK(body) || SvTYPE(SvRV(body)) != SVt_PVAV)
        croak("Not an ARRAY reference");
    av = (AV *)SvRV(body);
    last = av_top_index(av);
    parts = last + 1;
    *total = 0;
    if (parts > MAX_PARTS) {
        joined = sv_2mortal(newSVpvs(""));
        for (i = 0; i <= last; i++) {
            SV **part = av_fetch(av, i, 0);
            const char *p = bytes_of(aTHX_ part ? *part : NULL, &len, "the response body");
            sv_catpvn(joined, p, len);
        }
        parts = 1;
        iov[1].iov_base = SvPVX(joined);
        iov[1].iov_len = SvCUR(joined);
        *total = SvCUR(joined);
    }
    else {
        for (i = 0; i <= last; i++) {
            SV **part = av_fetch(av, i, 0);
            iov[i + 1].iov_base
                = (void *)bytes_of(aTHX_ part ? *part : NULL, &len, "the response body");
            iov[i + 1].iov_len = len;
            *total += len;
        }
    }
    body_length = sv_2mortal(newSVuv(*total));
    *head = build_head(aTHX_ status_line, status, headers, body_length, http11, head_only,
                       keep_alive, server_line, framing, length);
    if (*framing == F_NONE) { parts = 0; *total = 0; }
    iov[0].iov_base = SvPVX(*head);
    iov[0].iov_len = SvCUR(*head);
    Zero(&msg, 1, struct msghdr);
    msg.msg_iov = iov;
    msg.msg_iovlen = parts + 1;
    n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = writev(fd, iov, parts + 1);
    return n;
}
