/*
 * Raw JSON kept verbatim, maps and lists, and structs: every field in the record model's order, each as
 * Go writes or omits it.
 *
 * Part of the one translation unit ``_canonical.c`` includes, in order (each part reads only what the parts before
 * it define).
 */

/* -- raw JSON ----------------------------------------------------------------------------------------------- */

static int check_raw_number(cursor *c) {
    const unsigned char *p = c->p, *end = c->end;
    if (p < end && *p == '-') p++;
    if (p >= end) return 0;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') p++;
    } else {
        return 0;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9') return 0;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return 0;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    c->p = p;
    return 1;
}

/* One compact JSON value (no insignificant whitespace anywhere). */
static int check_raw_value(cursor *c, int depth) {
    if (c->p >= c->end || depth > MAX_RAW_DEPTH) return 0;
    unsigned char b = *c->p;
    if (b == '"') return check_raw_string(c);
    if (b == '{') {
        c->p++;
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            return 1;
        }
        for (;;) {
            if (!check_raw_string(c) || !literal(c, ":", 1) || !check_raw_value(c, depth + 1)) return 0;
            if (c->p >= c->end) return 0;
            if (*c->p == '}') {
                c->p++;
                return 1;
            }
            if (*c->p != ',') return 0;
            c->p++;
        }
    }
    if (b == '[') {
        c->p++;
        if (c->p < c->end && *c->p == ']') {
            c->p++;
            return 1;
        }
        for (;;) {
            if (!check_raw_value(c, depth + 1)) return 0;
            if (c->p >= c->end) return 0;
            if (*c->p == ']') {
                c->p++;
                return 1;
            }
            if (*c->p != ',') return 0;
            c->p++;
        }
    }
    if (b == 't') return literal(c, "true", 4);
    if (b == 'f') return literal(c, "false", 5);
    if (b == 'n') return literal(c, "null", 4);
    return check_raw_number(c);
}

/* -- maps and lists ----------------------------------------------------------------------------------------- */

/* Whether ``key`` sorts strictly after ``previous`` as bytes: Go writes a map's keys sorted by their text, and a
 * repeated key would re-encode once. */
static int strictly_after(const unsigned char *previous, Py_ssize_t previous_length, const unsigned char *key,
                          Py_ssize_t key_length) {
    Py_ssize_t shorter = key_length < previous_length ? key_length : previous_length;
    int order = memcmp(previous, key, (size_t)shorter);
    return order < 0 || (order == 0 && previous_length < key_length);
}

/* null, or an object of uint64 values whose keys (without escapes, which the Python path judges) are strictly
 * increasing byte strings: Go writes a map's keys sorted, and a repeated key would re-encode once. */
static int check_uint_map(cursor *c) {
    if (literal(c, "null", 4)) return 1;
    if (!literal(c, "{", 1)) return 0;
    if (literal(c, "}", 1)) return 1;
    const unsigned char *previous = NULL;
    Py_ssize_t previous_length = 0;
    for (;;) {
        const unsigned char *key = c->p + 1;
        if (!check_go_string(c)) return 0;
        Py_ssize_t key_length = c->p - 1 - key;
        if (memchr(key, '\\', (size_t)key_length) != NULL) return 0;
        if (previous != NULL && !strictly_after(previous, previous_length, key, key_length)) return 0;
        previous = key;
        previous_length = key_length;
        uint64_t ignored;
        if (!literal(c, ":", 1) || !check_uint64(c, &ignored)) return 0;
        if (literal(c, "}", 1)) return 1;
        if (!literal(c, ",", 1)) return 0;
    }
}

/* An int64 map key in the one spelling Go writes it: a quoted decimal, no sign but a minus, no leading zero. */
static int check_int_key(cursor *c) {
    if (!literal(c, "\"", 1)) return 0;
    int nonzero;
    if (!check_int64(c, &nonzero)) return 0;
    return literal(c, "\"", 1);
}

/* A non-empty object of int64 values keyed by int64 in decimal, the keys strictly increasing as byte strings
 * (Go sorts a map's keys by their text); an empty map is omitted, so never written. */
static int check_int_map(cursor *c) {
    if (!literal(c, "{", 1)) return 0;
    const unsigned char *previous = NULL;
    Py_ssize_t previous_length = 0;
    for (;;) {
        const unsigned char *key = c->p + 1;
        if (!check_int_key(c)) return 0;
        Py_ssize_t key_length = c->p - 1 - key;
        if (previous != NULL && !strictly_after(previous, previous_length, key, key_length)) return 0;
        previous = key;
        previous_length = key_length;
        int nonzero;
        if (!literal(c, ":", 1) || !check_int64(c, &nonzero)) return 0;
        if (literal(c, "}", 1)) return 1;
        if (!literal(c, ",", 1)) return 0;
    }
}

static int check_list(cursor *c, int schema_index, int depth) {
    if (literal(c, "null", 4)) return 1;
    if (!literal(c, "[", 1)) return 0;
    if (literal(c, "]", 1)) return 1;
    for (;;) {
        if (!check_object(c, schema_index, NULL, depth + 1)) return 0;
        if (literal(c, "]", 1)) return 1;
        if (!literal(c, ",", 1)) return 0;
    }
}

/* -- structs ------------------------------------------------------------------------------------------------ */

static int omitted_when_zero(int type) {
    return type == T_STR_OMIT || type == T_INT64_OMIT || type == T_BOOL_OMIT || type == T_BYTES_OMIT ||
           type == T_OBJECT_OMIT || type == T_TIME_OMIT || type == T_INT_MAP_OMIT;
}

static int check_value(cursor *c, const field *f, int index, envelope *out, int depth) {
    switch (f->type) {
    case T_STR:
    case T_STR_OMIT: {
        const unsigned char *start = c->p;
        if (!check_go_string(c)) return 0;
        if (f->type == T_STR_OMIT && c->p - start == 2) return 0; /* "" is omitted */
        if (out != NULL && index == the_model.protocol_field) {
            Py_ssize_t length = c->p - start - 2;
            out->protocol = OTHER_PROTOCOL;
            for (int i = 0; i < the_model.protocol_count; i++) {
                if (the_model.protocol_lengths[i] == length &&
                    memcmp(the_model.protocols[i], start + 1, (size_t)length) == 0) {
                    out->protocol = i;
                    break;
                }
            }
        }
        return 1;
    }
    case T_INT64:
    case T_INT64_OMIT: {
        int nonzero;
        if (!check_int64(c, &nonzero)) return 0;
        return f->type == T_INT64 || nonzero;
    }
    case T_UINT64: {
        uint64_t value;
        if (!check_uint64(c, &value)) return 0;
        if (out != NULL && index == the_model.seq_field) out->seq = value;
        return 1;
    }
    case T_BOOL_OMIT:
        if (!literal(c, "true", 4)) return 0; /* false is omitted */
        if (out != NULL && index == the_model.optional_field) out->optional = 1;
        return 1;
    case T_TIME:
        return check_go_time(c);
    case T_BYTES_OMIT:
        return check_base64(c);
    case T_RAW:
        return check_raw_value(c, 0);
    case T_OBJECT:
    case T_OBJECT_OMIT:
        return check_object(c, f->schema, NULL, depth + 1);
    case T_LIST_OR_NULL:
        return check_list(c, f->schema, depth);
    case T_UINT_MAP_OR_NULL:
        return check_uint_map(c);
    case T_TIME_OMIT:
        return check_go_time_not_zero(c);
    case T_INT_MAP_OMIT:
        return check_int_map(c);
    default:
        return 0;
    }
}

/* An object of the given schema: its keys exactly the field names in field order, each at most once, every
 * field Go always writes present. ``out``, for the record schema, receives the envelope. */
static int check_object(cursor *c, int schema_index, envelope *out, int depth) {
    if (depth > MAX_RAW_DEPTH) return 0;
    const schema *s = &the_model.schemas[schema_index];
    if (!literal(c, "{", 1)) return 0;
    int next = 0; /* the first field that may still come */
    if (!literal(c, "}", 1)) {
        for (;;) {
            if (c->p >= c->end || *c->p != '"') return 0;
            const unsigned char *name = c->p + 1;
            int found = -1;
            for (int i = next; i < s->count; i++) {
                const field *f = &s->fields[i];
                if (c->end - name > f->name_length && name[f->name_length] == '"' &&
                    memcmp(name, f->name, (size_t)f->name_length) == 0) {
                    found = i;
                    break;
                }
                if (!omitted_when_zero(f->type)) return 0; /* a field Go always writes is missing */
            }
            if (found < 0) return 0; /* an unknown, repeated or out-of-order key */
            c->p = name + s->fields[found].name_length + 1;
            if (s->fields[found].newest_only) c->newest = 1;
            if (!literal(c, ":", 1) || !check_value(c, &s->fields[found], found, out, depth)) return 0;
            next = found + 1;
            if (literal(c, "}", 1)) break;
            if (!literal(c, ",", 1)) return 0;
        }
    }
    for (int i = next; i < s->count; i++) {
        if (!omitted_when_zero(s->fields[i].type)) return 0;
    }
    return 1;
}
