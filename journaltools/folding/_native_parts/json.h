/*
 * Growable bytes and the reading of canonical JSON: a cursor over one line, its keys, strings (by the escapes
 * Go writes), numbers and skipped values.
 *
 * Part of the one translation unit ``_native.c`` includes, in order (each part reads only what the parts before it
 * define).
 */

/* -- growable bytes -------------------------------------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t length;
    Py_ssize_t capacity;
} bytes_buffer;

static int buffer_reserve(bytes_buffer *b, Py_ssize_t more) {
    if (b->length + more <= b->capacity) return 0;
    Py_ssize_t capacity = b->capacity ? b->capacity : 256;
    while (capacity < b->length + more) capacity *= 2;
    /* The raw allocator: the walk runs without the GIL (fold_rows raises MemoryError once it has it back). */
    char *data = PyMem_RawRealloc(b->data, (size_t)capacity);
    if (data == NULL) return -1;
    b->data = data;
    b->capacity = capacity;
    return 0;
}

/* An empty put copies nothing and is never passed on: its source may be NULL (an empty buffer's data), which
 * memcpy may not be given even for no bytes (C11 7.24.1), and a compiler may assume it is not NULL afterwards. */
static int buffer_put(bytes_buffer *b, const void *data, Py_ssize_t length) {
    if (length == 0) return 0;
    if (buffer_reserve(b, length) < 0) return -1;
    memcpy(b->data + b->length, data, (size_t)length);
    b->length += length;
    return 0;
}

/* A string kept in the walk's arena: its offset and length (the arena may move as it grows). */
typedef struct {
    Py_ssize_t offset;
    Py_ssize_t length;
} text_ref;

/* A list of strings kept in the walk's arena (approvals, call approvals, memory keys), made a Python list only
 * once the walk is over and holds the GIL again. */
typedef struct {
    text_ref *items;
    Py_ssize_t count;
    Py_ssize_t capacity;
} text_list;

static int text_list_add(text_list *list, text_ref item) {
    if (list->count == list->capacity) {
        Py_ssize_t capacity = list->capacity ? list->capacity * 2 : 8;
        text_ref *items = PyMem_RawRealloc(list->items, (size_t)capacity * sizeof(text_ref));
        if (items == NULL) return -1;
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->count++] = item;
    return 0;
}

/* -- reading canonical JSON ------------------------------------------------------------------------------------ */

/* What stops a walk: STOP_OTHER for a journal left to Python, STOP_ERROR for a Python exception set. */
#define STOP_OTHER (-1)
#define STOP_ERROR (-2)

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
} cursor;

static int take(cursor *c, unsigned char ch) {
    if (c->p >= c->end || *c->p != ch) return STOP_OTHER;
    c->p++;
    return 0;
}

static int peek(cursor *c, unsigned char ch) { return c->p < c->end && *c->p == ch; }

static int take_word(cursor *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return STOP_OTHER;
    c->p += n;
    return 0;
}

static int hex_value(unsigned char ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static int put_utf8(bytes_buffer *out, unsigned int code) {
    unsigned char bytes[3];
    Py_ssize_t n;
    if (code < 0x80) {
        bytes[0] = (unsigned char)code;
        n = 1;
    } else if (code < 0x800) {
        bytes[0] = (unsigned char)(0xC0 | (code >> 6));
        bytes[1] = (unsigned char)(0x80 | (code & 0x3F));
        n = 2;
    } else {
        bytes[0] = (unsigned char)(0xE0 | (code >> 12));
        bytes[1] = (unsigned char)(0x80 | ((code >> 6) & 0x3F));
        bytes[2] = (unsigned char)(0x80 | (code & 0x3F));
        n = 3;
    }
    return buffer_put(out, bytes, n);
}

/* A string value, unescaped onto ``out`` (when not NULL); ``chars`` (when not NULL) gets its code points. */
static int read_string(cursor *c, bytes_buffer *out, Py_ssize_t *chars) {
    if (take(c, '"') < 0) return STOP_OTHER;
    Py_ssize_t count = 0;
    for (;;) {
        const unsigned char *start = c->p;
#if defined(__SSE2__)
        /* Sixteen bytes at a time while none ends the run of plain bytes: the text of a message is most of a
         * journal. A code point is a byte that is not a continuation byte (0x80-0xBF: below -64 as signed). */
        const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), continuation = _mm_set1_epi8(-64);
        const __m128i zero = _mm_setzero_si128();
        __m128i continuations = zero; /* per 8-byte half, how many continuation bytes were passed */
        while (c->end - c->p >= 16) {
            __m128i chunk = _mm_loadu_si128((const __m128i *)c->p);
            if (_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)))) break;
            /* 0xFF per continuation byte, made 1 and summed into the two halves (no popcount instruction needed) */
            __m128i ones = _mm_sub_epi8(zero, _mm_cmplt_epi8(chunk, continuation));
            continuations = _mm_add_epi64(continuations, _mm_sad_epu8(ones, zero));
            count += 16;
            c->p += 16;
        }
        count -= _mm_cvtsi128_si32(continuations) + _mm_cvtsi128_si32(_mm_srli_si128(continuations, 8));
#endif
        while (c->p < c->end && *c->p != '"' && *c->p != '\\') {
            count += (*c->p & 0xC0) != 0x80;
            c->p++;
        }
        if (out != NULL && c->p > start && buffer_put(out, start, c->p - start) < 0) return STOP_ERROR;
        if (c->p >= c->end) return STOP_OTHER;
        if (*c->p == '"') {
            c->p++;
            break;
        }
        /* an escape */
        if (c->end - c->p < 2) return STOP_OTHER;
        unsigned char escaped = c->p[1];
        unsigned int code;
        c->p += 2;
        switch (escaped) {
        case '"': code = '"'; break;
        case '\\': code = '\\'; break;
        case 'n': code = '\n'; break;
        case 'r': code = '\r'; break;
        case 't': code = '\t'; break;
        case 'b': code = '\b'; break;
        case 'f': code = '\f'; break;
        case '/': code = '/'; break; /* raw JSON (a tool's input) may hold it as the model wrote it */
        case 'u': {
            if (c->end - c->p < 4) return STOP_OTHER;
            int digits[4];
            for (int i = 0; i < 4; i++) {
                digits[i] = hex_value(c->p[i]);
                if (digits[i] < 0) return STOP_OTHER;
            }
            code = (unsigned int)((digits[0] << 12) | (digits[1] << 8) | (digits[2] << 4) | digits[3]);
            c->p += 4;
            /* Go writes \u00XX, \u2028, \u2029 and \ufffd; a surrogate would need pairing: left to Python. */
            if (code >= 0xD800 && code <= 0xDFFF) return STOP_OTHER;
            break;
        }
        default:
            return STOP_OTHER;
        }
        count++;
        if (out != NULL && put_utf8(out, code) < 0) return STOP_ERROR;
    }
    if (chars != NULL) *chars = count;
    return 0;
}

/* An object key (never escaped in a record the scanner proved) and its colon. */
static int read_key(cursor *c, const unsigned char **key, Py_ssize_t *length) {
    if (take(c, '"') < 0) return STOP_OTHER;
    *key = c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p == '\\') return STOP_OTHER;
        c->p++;
    }
    *length = c->p - *key;
    if (take(c, '"') < 0 || take(c, ':') < 0) return STOP_OTHER;
    return 0;
}

static int key_is(const unsigned char *key, Py_ssize_t length, const char *name) {
    return (size_t)length == strlen(name) && memcmp(key, name, (size_t)length) == 0;
}

/* The next key of an object being walked (its colon read): 1, or 0 once its closing brace is passed, or what stops
 * the walk. ``*started`` is 0 before the object's opening brace; the caller reads each key's value in between. */
static int next_key(cursor *c, int *started, const unsigned char **key, Py_ssize_t *length) {
    if (!*started) {
        if (take(c, '{') < 0) return STOP_OTHER;
        *started = 1;
    } else if (peek(c, ',')) {
        c->p++;
    }
    if (peek(c, '}')) {
        c->p++;
        return 0;
    }
    int status = read_key(c, key, length);
    return status < 0 ? status : 1;
}

static int read_uint64(cursor *c, uint64_t *value) {
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return STOP_OTHER;
    uint64_t n = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned digit = (unsigned)(*c->p - '0');
        if (n > (UINT64_MAX - digit) / 10) return STOP_OTHER;
        n = n * 10 + digit;
        c->p++;
    }
    *value = n;
    return 0;
}

static int read_int64(cursor *c, int64_t *value) {
    int negative = peek(c, '-');
    if (negative) c->p++;
    uint64_t magnitude;
    if (read_uint64(c, &magnitude) < 0) return STOP_OTHER;
    if (negative ? magnitude > (uint64_t)INT64_MAX + 1 : magnitude > (uint64_t)INT64_MAX) return STOP_OTHER;
    *value = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return 0;
}

static int read_bool(cursor *c, int *value) {
    if (take_word(c, "true") == 0) {
        *value = 1;
        return 0;
    }
    if (take_word(c, "false") == 0) {
        *value = 0;
        return 0;
    }
    return STOP_OTHER;
}

/* Any value, skipped (compact JSON: the scanner proved it); nesting deeper than ``depth`` is left to Python. */
static int skip_value(cursor *c, int depth) {
    if (depth > 200 || c->p >= c->end) return STOP_OTHER;
    unsigned char ch = *c->p;
    if (ch == '"') return read_string(c, NULL, NULL);
    if (ch == '{' || ch == '[') {
        unsigned char close = ch == '{' ? '}' : ']';
        c->p++;
        if (peek(c, close)) {
            c->p++;
            return 0;
        }
        for (;;) {
            if (ch == '{') {
                if (read_string(c, NULL, NULL) < 0 || take(c, ':') < 0) return STOP_OTHER;
            }
            int status = skip_value(c, depth + 1);
            if (status < 0) return status;
            if (peek(c, ',')) {
                c->p++;
                continue;
            }
            return take(c, close);
        }
    }
    /* a number, true, false or null */
    while (c->p < c->end && *c->p != ',' && *c->p != '}' && *c->p != ']') c->p++;
    return 0;
}
