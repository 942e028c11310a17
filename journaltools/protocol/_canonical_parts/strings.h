/*
 * Strings checked as Go's encoder writes them: its escapes, valid UTF-8, the characters it escapes.
 *
 * Part of the one translation unit ``_canonical.c`` includes, in order (each part reads only what the parts before
 * it define).
 */

/* -- strings ------------------------------------------------------------------------------------------------ */

/* The length of a valid UTF-8 sequence starting at p (its lead byte >= 0x80), 0 for an invalid one. */
static int utf8_sequence(const unsigned char *p, const unsigned char *end) {
    unsigned char lead = p[0];
    if (lead >= 0xC2 && lead <= 0xDF) {
        return (end - p >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    }
    if (lead >= 0xE0 && lead <= 0xEF) {
        if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (lead == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
        if (lead == 0xED && p[1] >= 0xA0) return 0; /* a surrogate */
        return 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (lead == 0xF0 && p[1] < 0x90) return 0; /* overlong */
        if (lead == 0xF4 && p[1] >= 0x90) return 0; /* beyond U+10FFFF */
        return 4;
    }
    return 0;
}

/* U+2028 and U+2029, which Go always escapes. */
static int is_line_separator(const unsigned char *p, int length) {
    return length == 3 && p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9);
}

static int hex_value(unsigned char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
}

/* The first byte at or after p that is not plain string text (a quote, a backslash, <, >, &, a control byte or a
 * byte of a multi-byte character), or end: the one loop that sees most of a journal's bytes. */
static const unsigned char *skip_plain_text(const unsigned char *p, const unsigned char *end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), less = _mm_set1_epi8('<');
    const __m128i greater = _mm_set1_epi8('>'), ampersand = _mm_set1_epi8('&'), space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i chunk = _mm_loadu_si128((const __m128i *)p);
        /* signed: a byte of 0x80 or more is negative, so "below space" also finds multi-byte characters */
        __m128i special = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, less), _mm_cmpeq_epi8(chunk, greater)),
                         _mm_or_si128(_mm_cmpeq_epi8(chunk, ampersand), _mm_cmplt_epi8(chunk, space))));
        int found = _mm_movemask_epi8(special);
        if (found) return p + __builtin_ctz((unsigned)found);
        p += 16;
    }
#endif
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\' && *p != '<' && *p != '>' && *p != '&') p++;
    return p;
}

/* The code unit of the four hex digits at p in Go's spelling (lowercase), -1 for any other spelling. */
static int lowercase_hex4(const unsigned char *p) {
    int value = 0;
    for (int i = 0; i < 4; i++) {
        if (p[i] >= 'A' && p[i] <= 'F') return -1;
        int digit = hex_value(p[i]);
        if (digit < 0) return -1;
        value = value * 16 + digit;
    }
    return value;
}

/* Whether Go writes this code unit as a \u escape (every other character is written as itself or a short escape). */
static int go_writes_as_unicode_escape(int unit) {
    if (unit < 0x20) return unit != '\b' && unit != '\t' && unit != '\n' && unit != '\f' && unit != '\r';
    return unit == '<' || unit == '>' || unit == '&' || unit == 0x2028 || unit == 0x2029;
}

/* A string at c->p (its opening quote); the cursor moves past the closing quote. Outside raw JSON (``raw`` 0) it
 * must be exactly as Go writes it. Inside raw JSON any valid escape is kept verbatim, but the bytes Go's encoder
 * escapes there too (<, >, &, U+2028, U+2029) must already be escaped, and a surrogate escape is left to the
 * Python path. */
static int check_string(cursor *c, int raw) {
    const unsigned char *p = c->p, *end = c->end;
    if (p >= end || *p != '"') return 0;
    p++;
    for (;;) {
        p = skip_plain_text(p, end);
        if (p >= end) return 0;
        unsigned char b = *p;
        if (b == '"') {
            c->p = p + 1;
            return 1;
        }
        if (b < 0x20 || b == '<' || b == '>' || b == '&') return 0;
        if (b == '\\') {
            if (end - p < 2) return 0;
            unsigned char e = p[1];
            if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't' || (raw && e == '/')) {
                p += 2;
                continue;
            }
            if (e != 'u' || end - p < 6) return 0;
            if (raw) {
                int unit = 0;
                for (int i = 0; i < 4; i++) {
                    int digit = hex_value(p[2 + i]);
                    if (digit < 0) return 0;
                    unit = unit * 16 + digit;
                }
                if (unit >= 0xD800 && unit <= 0xDFFF) return 0;
            } else {
                int unit = lowercase_hex4(p + 2);
                if (unit < 0 || !go_writes_as_unicode_escape(unit)) return 0;
            }
            p += 6;
            continue;
        }
        int length = utf8_sequence(p, end); /* skip_plain_text stops at no other plain byte */
        if (length == 0 || is_line_separator(p, length)) return 0;
        p += length;
    }
}

static int check_go_string(cursor *c) { return check_string(c, 0); }

static int check_raw_string(cursor *c) { return check_string(c, 1); }
