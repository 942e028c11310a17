/*
 * Go times: a record's time read as the runtime writes it (RFC 3339, up to nine fraction digits, any offset),
 * held as seconds and nanoseconds since 1970 UTC; a time no column holds stops the walk.
 *
 * Part of the one translation unit ``_native.c`` includes, in order (each part reads only what the parts before it
 * define).
 */

/* -- Go times ---------------------------------------------------------------------------------------------------- */

typedef struct {
    int dated;
    int64_t seconds; /* since 1970, UTC */
    int32_t nanos;
    const unsigned char *text; /* the time as written, for the caller's run row */
    Py_ssize_t text_length;
} moment;

/* A record dated before the dated record before it: a times_out_of_order finding (the Python fold words it). */
typedef struct {
    uint64_t seq, before_seq;
    moment time, before;
} backstep;

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits_at(const unsigned char *p, int n, int *value) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return -1;
        v = v * 10 + (p[i] - '0');
    }
    *value = v;
    return 0;
}

/* A time string in Go's RFC 3339 form (the scanner proved the form; the values are checked again here). */
static int read_time(cursor *c, moment *out) {
    if (take(c, '"') < 0) return STOP_OTHER;
    const unsigned char *s = c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p == '\\') return STOP_OTHER;
        c->p++;
    }
    const unsigned char *e = c->p;
    if (take(c, '"') < 0) return STOP_OTHER;
    Py_ssize_t n = e - s;
    out->text = s;
    out->text_length = n;
    out->dated = 0;
    if (n == 0) return 0;
    int year, month, day, hour, minute, second;
    if (n < 20 || digits_at(s, 4, &year) || s[4] != '-' || digits_at(s + 5, 2, &month) || s[7] != '-' ||
        digits_at(s + 8, 2, &day) || s[10] != 'T' || digits_at(s + 11, 2, &hour) || s[13] != ':' ||
        digits_at(s + 14, 2, &minute) || s[16] != ':' || digits_at(s + 17, 2, &second))
        return STOP_OTHER;
    /* Python holds no year 0 (its readers answer None there): such a journal is left to them. */
    if (year < 1 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59)
        return STOP_OTHER;
    static const int month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    if (day > month_days[month - 1] || (month == 2 && day == 29 && !leap)) return STOP_OTHER;
    const unsigned char *p = s + 19;
    int32_t nanos = 0;
    if (p < e && *p == '.') {
        p++;
        int digits = 0;
        while (p < e && *p >= '0' && *p <= '9') {
            if (++digits > 9) return STOP_OTHER;
            nanos = nanos * 10 + (*p - '0');
            p++;
        }
        if (digits == 0) return STOP_OTHER;
        for (int i = digits; i < 9; i++) nanos *= 10;
    }
    int64_t offset = 0;
    if (p < e && *p == 'Z') {
        p++;
    } else if (p < e && (*p == '+' || *p == '-')) {
        int oh, om;
        if (e - p != 6 || digits_at(p + 1, 2, &oh) || p[3] != ':' || digits_at(p + 4, 2, &om) || oh > 23 ||
            om > 59)
            return STOP_OTHER;
        offset = (int64_t)(oh * 60 + om) * 60;
        if (*p == '-') offset = -offset;
        p = e;
    } else {
        return STOP_OTHER;
    }
    if (p != e) return STOP_OTHER;
    out->seconds = days_from_civil(year, (unsigned)month, (unsigned)day) * 86400 + hour * 3600 + minute * 60 +
                   second - offset;
    out->nanos = nanos;
    out->dated = 1;
    /* A time no column holds (its offset moves it out of years 1-9999 UTC) is null with a finding: Python's rule. */
    int64_t micros = out->seconds * 1000000 + nanos / 1000;
    if (micros < MIN_MICROS || micros > MAX_MICROS) return STOP_OTHER;
    return 0;
}

/* go_time(): the instant in microseconds (read_time took only times a column holds), None when undated. */
static PyObject *micros_or_none(const moment *m) {
    if (!m->dated) Py_RETURN_NONE;
    return PyLong_FromLongLong(m->seconds * 1000000 + m->nanos / 1000);
}
