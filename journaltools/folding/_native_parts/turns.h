/*
 * A message's blocks and the calls they make, and the assistant turn being gathered: when it commits, what it
 * waits for, and the gap between two records that times a call.
 *
 * Part of the one translation unit ``_native.c`` includes, in order (each part reads only what the parts before it
 * define).
 */

/* What a message's blocks add up to, for its row. */
typedef struct {
    bytes_buffer *text;
    int *text_blocks;
    Py_ssize_t *thinking;
    int64_t *uses, *results, *providers;
} block_sums;

static int add_call(walk *w, cursor *c, uint64_t seq, const moment *time) {
    if (w->call_count == w->call_capacity) {
        Py_ssize_t capacity = w->call_capacity ? w->call_capacity * 2 : 16;
        call *calls = PyMem_RawRealloc(w->calls, (size_t)capacity * sizeof(call));
        if (calls == NULL) return STOP_ERROR;
        w->calls = calls;
        w->call_capacity = capacity;
    }
    call *made = &w->calls[w->call_count];
    memset(made, 0, sizeof(*made));
    made->made_seq = seq;
    made->made = *time;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    int seen_input = 0;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        int status = 0;
        if (key_is(key, length, "id")) {
            status = read_into_arena(w, c, &made->id, NULL);
        } else if (key_is(key, length, "name")) {
            status = read_into_arena(w, c, &made->name, NULL);
        } else if (key_is(key, length, "input")) {
            const unsigned char *start = c->p;
            status = skip_value(c, 0);
            made->input = start;
            made->input_length = c->p - start;
            seen_input = 1;
        } else {
            return STOP_OTHER;
        }
        if (status < 0) return status;
    }
    if (more < 0) return more;
    if (!seen_input) return STOP_OTHER;
    /* The same id twice in one turn: the reference pairs them by recency; left to it. */
    if (w->call_count - w->turn_first_call >= MAX_TURN_CALLS) return STOP_OTHER;
    for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
        if (arena_equal(w, w->calls[i].id, made->id)) return STOP_OTHER;
    }
    w->call_count++;
    return 0;
}

/* A message's content array; ``calls`` is set for an assistant record, whose tool_use blocks are calls. */
static int read_blocks(walk *w, cursor *c, block_sums *sums, int calls, uint64_t seq, const moment *time) {
    if (take_word(c, "null") == 0) return 0;
    if (take(c, '[') < 0) return STOP_OTHER;
    while (!peek(c, ']')) {
        const unsigned char *key;
        Py_ssize_t length;
        int started = 0, more;
        int kinds = 0;
        while ((more = next_key(c, &started, &key, &length)) > 0) {
            int status = 0;
            /* A block with two kinds set reads differently to the reference's rows and its calls: left to it. */
            if (++kinds > 1) return STOP_OTHER;
            if (key_is(key, length, "text")) {
                if (take(c, '{') < 0) return STOP_OTHER;
                const unsigned char *inner;
                Py_ssize_t inner_length;
                if ((status = read_key(c, &inner, &inner_length)) < 0) return status;
                if (!key_is(inner, inner_length, "text")) return STOP_OTHER;
                if (*sums->text_blocks > 0 && buffer_put(sums->text, "\n", 1) < 0) return STOP_ERROR;
                (*sums->text_blocks)++;
                if ((status = read_string(c, sums->text, NULL)) < 0) return status;
                if (take(c, '}') < 0) return STOP_OTHER;
            } else if (key_is(key, length, "thinking")) {
                const unsigned char *inner;
                Py_ssize_t inner_length;
                int inner_started = 0, inner_more;
                while ((inner_more = next_key(c, &inner_started, &inner, &inner_length)) > 0) {
                    if (key_is(inner, inner_length, "text")) {
                        Py_ssize_t chars = 0;
                        if ((status = read_string(c, NULL, &chars)) < 0) return status;
                        *sums->thinking += chars;
                    } else if ((status = skip_value(c, 0)) < 0) {
                        return status;
                    }
                }
                if (inner_more < 0) return inner_more;
            } else if (key_is(key, length, "tool_use")) {
                (*sums->uses)++;
                if (calls) {
                    if ((status = add_call(w, c, seq, time)) < 0) return status;
                } else if ((status = skip_value(c, 0)) < 0) {
                    return status;
                }
            } else if (key_is(key, length, "tool_result")) {
                (*sums->results)++;
                if ((status = skip_value(c, 0)) < 0) return status;
            } else if (key_is(key, length, "provider")) {
                (*sums->providers)++;
                if ((status = skip_value(c, 0)) < 0) return status;
            } else {
                return STOP_OTHER;
            }
        }
        if (more < 0) return more;
        if (peek(c, ',')) c->p++;
    }
    c->p++;
    return 0;
}

/* ``{"role":"<role>","content":...}``: a message whose role must be ``role`` (another is left to Python). */
static int read_message(walk *w, cursor *c, const char *role, block_sums *sums, int calls, uint64_t seq,
                        const moment *time) {
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    int seen_content = 0;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        int status = 0;
        if (key_is(key, length, "role")) {
            if (take(c, '"') < 0 || take_word(c, role) < 0 || take(c, '"') < 0) return STOP_OTHER;
        } else if (key_is(key, length, "content")) {
            seen_content = 1;
            if ((status = read_blocks(w, c, sums, calls, seq, time)) < 0) return status;
        } else {
            return STOP_OTHER;
        }
    }
    if (more < 0) return more;
    return seen_content ? 0 : STOP_OTHER;
}

static int commit_turn(walk *w) {
    /* The assistant message, then the results gathered (one user message, which later users merge into). */
    int status = flush_user_message(w);
    if (status < 0) return status;
    if ((status = put_message(w, w->turn_seq, 0, "assistant", w->turn_text.data, w->turn_text.length,
                              w->turn_thinking, w->turn_uses, w->turn_results, w->turn_providers)) < 0)
        return status;
    if (w->turn_result_count > 0) {
        open_user_message(w, w->turn_first_result_seq);
        w->last.results = w->turn_result_count;
    }
    w->in_turn = 0;
    return 0;
}

/* Whether a call of the turn in flight has no result yet. */
static int turn_waits(const walk *w) {
    for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
        if (!w->calls[i].answered) return 1;
    }
    return 0;
}

/* A turn closed by the record ``seq``: each call it left unanswered is an unanswered_call warning (``summary``). */
static int close_turn(walk *w, uint64_t seq) {
    if (!w->in_turn) return 0;
    for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
        if (!w->calls[i].answered) w->calls[i].closed_by = seq;
    }
    return commit_turn(w);
}

/* A user or assistant record: a new turn. After a terminal, only once a claim has come (else a finding). */
static int new_turn_after_terminal(walk *w) {
    if (w->terminal_waits_claim) return STOP_OTHER;
    return 0;
}

static int gap(const moment *before, const moment *after, int *timed, int64_t *duration) {
    *timed = 0;
    if (!before->dated || !after->dated) return 0;
    /* Python reads year 0 as undated; read_time left such a journal already. */
    int64_t seconds = after->seconds - before->seconds;
    int64_t nanos = (int64_t)after->nanos - before->nanos;
    if (seconds < 0 || (seconds == 0 && nanos < 0)) return 0;
    /* beyond the duration column: left to Python, which nulls it with a finding (tables.columns.ValueFit) */
    if (seconds > INT64_MAX / 1000000000 - 1) return STOP_OTHER;
    *duration = seconds * 1000000000 + nanos;
    *timed = 1;
    return 0;
}
