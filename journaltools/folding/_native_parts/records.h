/*
 * Each record kind read and folded by the runtime's rules (assistant, user, tool_result, deferred, decision,
 * call_approval, memory_revisions, meta, terminal, claim), the process runs (segments) they open and end, and one
 * record line's envelope (``read_record``).
 *
 * Part of the one translation unit ``_native.c`` includes, in order (each part reads only what the parts before it
 * define).
 */

static int read_assistant(walk *w, cursor *c, uint64_t seq, const moment *time) {
    int status;
    if ((status = new_turn_after_terminal(w)) < 0) return status;
    if ((status = close_turn(w, seq)) < 0) return status;
    w->turn_first_call = w->call_count;
    w->turn_text.length = 0;
    w->turn_text_blocks = 0;
    w->turn_thinking = 0;
    w->turn_uses = w->turn_results = w->turn_providers = 0;
    w->turn_result_count = 0;
    int64_t iteration = 0, in = 0, out = 0, cache_read = 0, cache_create = 0, thinking = 0;
    text_ref stop = {w->arena.length, 0};
    int seen_message = 0;
    block_sums sums = {&w->turn_text, &w->turn_text_blocks, &w->turn_thinking, &w->turn_uses, &w->turn_results,
                       &w->turn_providers};
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "iteration")) status = read_int64(c, &iteration);
        else if (key_is(key, length, "message")) {
            seen_message = 1;
            status = read_message(w, c, "assistant", &sums, 1, seq, time);
        } else if (key_is(key, length, "stop_reason")) status = read_into_arena(w, c, &stop, NULL);
        else if (key_is(key, length, "in_tokens")) status = read_int64(c, &in);
        else if (key_is(key, length, "out_tokens")) status = read_int64(c, &out);
        else if (key_is(key, length, "cache_read_tokens")) status = read_int64(c, &cache_read);
        else if (key_is(key, length, "cache_create_tokens")) status = read_int64(c, &cache_create);
        else if (key_is(key, length, "thinking_tokens")) status = read_int64(c, &thinking);
        else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    if (!seen_message) return STOP_OTHER;
    w->in_turn = 1;
    w->turn_seq = seq;
    w->saw_assistant = 1;
    w->last_iteration = iteration;
    w->last_stop = stop;
    w->context_tokens = (uint64_t)in + (uint64_t)cache_read + (uint64_t)cache_create;
    w->counters[0] += 1;
    w->counters[4] += (uint64_t)in;
    w->counters[5] += (uint64_t)out;
    w->counters[6] += (uint64_t)cache_read;
    w->counters[7] += (uint64_t)cache_create;
    w->counters[8] += (uint64_t)thinking;
    w->segment_llm++;
    w->segment_in += (uint64_t)in;
    w->segment_out += (uint64_t)out;
    int base = M_COLUMNS + C_COLUMNS;
    if (put_uint(w, base + R_SEQ, seq) < 0 || put_int(w, base + R_ITERATION, iteration) < 0 ||
        put_micros(w, base + R_TIME, time) < 0 || put_arena_or_null(w, base + R_STOP_REASON, stop) < 0 ||
        put_int(w, base + R_IN, in) < 0 || put_int(w, base + R_OUT, out) < 0 ||
        put_int(w, base + R_CACHE_READ, cache_read) < 0 || put_int(w, base + R_CACHE_CREATE, cache_create) < 0 ||
        put_int(w, base + R_THINKING, thinking) < 0)
        return STOP_ERROR;
    return 0;
}

static int read_user(walk *w, cursor *c, uint64_t seq) {
    int status;
    if ((status = new_turn_after_terminal(w)) < 0) return status;
    if ((status = close_turn(w, seq)) < 0) return status;
    w->turns++;
    if (!w->last.open) {
        open_user_message(w, seq);
    }
    block_sums sums = {&w->text, &w->last.text_blocks, &w->last.thinking, &w->last.uses, &w->last.results,
                       &w->last.providers};
    if (take(c, '{') < 0) return STOP_OTHER;
    const unsigned char *key;
    Py_ssize_t length;
    if ((status = read_key(c, &key, &length)) < 0) return status;
    if (!key_is(key, length, "message")) return STOP_OTHER;
    moment undated = {0};
    if ((status = read_message(w, c, "user", &sums, 0, seq, &undated)) < 0) return status;
    return take(c, '}');
}

static call *turn_call(walk *w, text_ref id) {
    if (!w->in_turn) return NULL;
    for (Py_ssize_t i = w->turn_first_call; i < w->call_count; i++) {
        if (arena_equal(w, w->calls[i].id, id)) return &w->calls[i];
    }
    return NULL;
}

static int parse_kind(walk *w, text_ref token) {
    for (int i = 1; i < kind_token_count; i++) {
        if (arena_is(w, token, KIND_TOKENS[i])) return i;
    }
    return 0;
}

static int read_tool_result(walk *w, cursor *c, uint64_t seq, const moment *time, const moment *before) {
    if (!w->in_turn) return STOP_OTHER; /* result_outside_turn */
    text_ref id = {0, 0}, result_id = {0, 0}, kind = {0, 0};
    int remote = 0, dispatched = 0, is_error = 0, seen_result = 0;
    Py_ssize_t chars = 0;
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "tool_use_id")) status = read_into_arena(w, c, &id, NULL);
        else if (key_is(key, length, "result")) {
            seen_result = 1;
            const unsigned char *inner;
            Py_ssize_t inner_length;
            int inner_started = 0, inner_more;
            while ((inner_more = next_key(c, &inner_started, &inner, &inner_length)) > 0) {
                if (key_is(inner, inner_length, "tool_use_id")) status = read_into_arena(w, c, &result_id, NULL);
                else if (key_is(inner, inner_length, "content")) status = read_string(c, NULL, &chars);
                else if (key_is(inner, inner_length, "is_error")) status = read_bool(c, &is_error);
                else return STOP_OTHER;
                if (status < 0) return status;
            }
            status = inner_more;
        } else if (key_is(key, length, "remote")) status = read_bool(c, &remote);
        else if (key_is(key, length, "kind")) status = read_into_arena(w, c, &kind, NULL);
        else if (key_is(key, length, "dispatched")) status = read_bool(c, &dispatched);
        else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    if (!seen_result || !arena_equal(w, id, result_id)) return STOP_OTHER; /* tool_use_id_mismatch */
    call *answered = turn_call(w, id);
    if (answered == NULL || answered->answered) return STOP_OTHER; /* unknown_call_result, duplicate_result */
    /* The newest fold's provider rule (kinds.provider_of). */
    int number;
    int ran;
    if (kind.length) {
        number = parse_kind(w, kind);
        ran = dispatched;
    } else if (remote) {
        number = kind_remote;
        ran = 1;
    } else {
        number = 0;
        ran = 0;
    }
    answered->answered = 1;
    answered->answered_seq = seq;
    answered->answered_at = *time;
    answered->is_error = is_error;
    answered->remote = remote;
    answered->kind = number;
    answered->dispatched = ran;
    answered->result_chars = chars;
    if (!answered->deferred && (status = gap(before, time, &answered->timed, &answered->duration)) < 0)
        return status;
    if (w->turn_result_count++ == 0) w->turn_first_result_seq = seq;
    w->counters[1] += 1;
    w->by_kind[number] += 1;
    w->by_kind_seen[number] = 1;
    if (ran && number == kind_remote) w->counters[2] += 1;
    if (ran && number == kind_mcp) w->counters[3] += 1;
    w->segment_tools++;
    w->results++;
    if (!kind.length) w->kindless++;
    return 0;
}

static int read_deferred(walk *w, cursor *c, const moment *time, const moment *before) {
    if (!w->in_turn) return STOP_OTHER; /* result_outside_turn */
    text_ref id = {0, 0}, note = {0, 0}, handle = {0, 0};
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "tool_use_id")) status = read_into_arena(w, c, &id, NULL);
        else if (key_is(key, length, "note")) status = read_into_arena(w, c, &note, NULL);
        else if (key_is(key, length, "handle")) status = read_into_arena(w, c, &handle, NULL);
        else if (key_is(key, length, "tool_name") || key_is(key, length, "kind") ||
                 key_is(key, length, "dispatched"))
            status = skip_value(c, 0);
        else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    call *waiting = turn_call(w, id);
    /* unknown_deferral; a deferral of an answered call or a second one the reference keeps apart: left to it. */
    if (waiting == NULL || waiting->answered || waiting->deferred) return STOP_OTHER;
    waiting->deferred = 1;
    waiting->note = note;
    waiting->handle = handle;
    return gap(before, time, &waiting->timed, &waiting->duration);
}

static int read_single_string(walk *w, cursor *c, const char *name, text_ref *value, const char *also) {
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    int seen = 0;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, name)) {
            seen = 1;
            status = read_into_arena(w, c, value, NULL);
        } else if (also != NULL && key_is(key, length, also)) {
            status = skip_value(c, 0);
        } else {
            return STOP_OTHER;
        }
        if (status < 0) return status;
    }
    if (more < 0) return more;
    return seen ? 0 : STOP_OTHER;
}

static int list_add(text_list *list, text_ref value) { return text_list_add(list, value) < 0 ? STOP_ERROR : 0; }

static int read_call_approval(walk *w, cursor *c) {
    text_ref id;
    int status = read_single_string(w, c, "tool_use_id", &id, "tool_name");
    if (status < 0) return status;
    if ((status = list_add(&w->call_approvals, id)) < 0) return status;
    /* The most recent call ever made with that id (facts.RunFacts): searched back, within a budget. */
    for (Py_ssize_t i = w->call_count - 1; i >= 0; i--) {
        if (--w->search_budget < 0) return STOP_OTHER;
        if (arena_equal(w, w->calls[i].id, id)) {
            w->calls[i].approved = 1;
            break;
        }
    }
    return 0;
}

static int read_memory(walk *w, cursor *c) {
    int status;
    if (take(c, '{') < 0) return STOP_OTHER;
    const unsigned char *key;
    Py_ssize_t length;
    if ((status = read_key(c, &key, &length)) < 0) return status;
    if (!key_is(key, length, "revisions")) return STOP_OTHER;
    w->memory_keys.count = 0;
    if (take_word(c, "null") != 0) {
        if (take(c, '{') < 0) return STOP_OTHER;
        while (!peek(c, '}')) {
            text_ref name;
            Py_ssize_t chars = 0;
            name.offset = w->arena.length;
            if ((status = read_string(c, &w->arena, &chars)) < 0) return status;
            name.length = w->arena.length - name.offset;
            uint64_t revision;
            if (take(c, ':') < 0 || read_uint64(c, &revision) < 0) return STOP_OTHER;
            /* What the published schemas refuse is a finding of the reference's (schema_violation). */
            if (chars < 1 || chars > 200 || revision < 1) return STOP_OTHER;
            if ((status = list_add(&w->memory_keys, name)) < 0) return status;
            if (peek(c, ',')) c->p++;
        }
        c->p++;
    }
    return take(c, '}');
}

/* The meta payload: only ``created`` is read (the caller decoded the rest, the prompt among it, from the line). */
static int read_meta(walk *w, cursor *c) {
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        status = key_is(key, length, "created") ? read_time(c, &w->created) : skip_value(c, 0);
        if (status < 0) return status;
    }
    return more;
}

static int read_terminal(walk *w, cursor *c, const moment *time) {
    text_ref reason = {0, 0}, message = {0, 0};
    int status;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "reason")) status = read_into_arena(w, c, &reason, NULL);
        else if (key_is(key, length, "message")) status = read_into_arena(w, c, &message, NULL);
        else if (key_is(key, length, "summary")) status = skip_value(c, 0);
        else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    int known = 0;
    for (int i = 0; i < terminal_reason_count; i++) {
        if (arena_is(w, reason, TERMINAL_REASONS[i])) known = 1;
    }
    if (!known) return STOP_OTHER; /* unknown_terminal_reason */
    w->terminal_set = 1;
    w->terminal_reason = reason;
    w->terminal_message = message;
    w->reopened = 0;
    w->ended = *time;
    w->call_approvals.count = 0;
    w->terminal_waits_claim = 1;
    w->any_terminal = 1;
    w->turn_after_terminal = 0;
    w->segment_terminal = 1;
    w->segment_reason = reason;
    w->segment_message = message;
    return 0;
}

static int end_segment(walk *w, const char *ending, uint64_t last_seq, const moment *last_time) {
    int base = M_COLUMNS + C_COLUMNS + R_COLUMNS;
    int claimed = w->segment_claimed, ended = w->segment_terminal;
    if (put_micros(w, base + S_STARTED_AT, &w->segment_started) < 0 ||
        put_micros(w, base + S_ENDED_AT, last_time) < 0 || put_int(w, base + S_SEGMENT, w->segment_index) < 0 ||
        put_uint(w, base + S_FIRST_SEQ, w->segment_first_seq) < 0 || put_uint(w, base + S_LAST_SEQ, last_seq) < 0 ||
        (claimed ? put_arena(w, base + S_CLAIMED_BY, w->segment_claimed_by) : put_null(w, base + S_CLAIMED_BY)) < 0 ||
        (claimed ? put_micros(w, base + S_CLAIMED_AT, &w->segment_claimed_at) : put_null(w, base + S_CLAIMED_AT)) < 0 ||
        (ended ? put_arena(w, base + S_ENDING, w->segment_reason) : put_word(w, base + S_ENDING, ending)) < 0 ||
        (ended ? put_arena_or_null(w, base + S_TERMINAL_MESSAGE, w->segment_message)
               : put_null(w, base + S_TERMINAL_MESSAGE)) < 0 ||
        put_int(w, base + S_LLM_CALLS, w->segment_llm) < 0 || put_int(w, base + S_TOOL_CALLS, w->segment_tools) < 0 ||
        put_int(w, base + S_IN, (int64_t)w->segment_in) < 0 || put_int(w, base + S_OUT, (int64_t)w->segment_out) < 0)
        return STOP_ERROR;
    w->segment_index++;
    return 0;
}

static void start_segment(walk *w, uint64_t seq, const moment *time) {
    w->segment_first_seq = seq;
    w->segment_started = *time;
    w->segment_claimed = 0;
    w->segment_terminal = 0;
    w->segment_llm = w->segment_tools = 0;
    w->segment_in = w->segment_out = 0;
}

static int read_claim(walk *w, cursor *c, uint64_t seq, const moment *time, uint64_t last_seq,
                      const moment *last_time) {
    int status = end_segment(w, "crashed", last_seq, last_time);
    if (status < 0) return status;
    start_segment(w, seq, time);
    w->segment_claimed = 1;
    w->resumes++;
    w->terminal_waits_claim = 0;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    int seen_at = 0;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "by")) status = read_into_arena(w, c, &w->segment_claimed_by, NULL);
        else if (key_is(key, length, "claimed")) {
            seen_at = 1;
            status = read_time(c, &w->segment_claimed_at);
        } else return STOP_OTHER;
        if (status < 0) return status;
    }
    if (more < 0) return more;
    return seen_at ? 0 : STOP_OTHER;
}

/* One record line: its envelope, then its one payload (a second, or none, is a finding: left to Python). */
static int read_record(walk *w, cursor *c, int kind, int index, uint64_t *seq_out, moment *time, uint64_t last_seq,
                       const moment *before) {
    int status;
    /* A kind the Python declarations hold and this walk does not fold (a newer generation's): given back. */
    if (kind < -1 || kind >= K_COUNT) return STOP_OTHER;
    uint64_t seq = 0;
    int payloads = 0, optional = 0;
    time->dated = 0;
    time->text = NULL;
    time->text_length = 0;
    const unsigned char *key;
    Py_ssize_t length;
    int started = 0, more;
    while ((more = next_key(c, &started, &key, &length)) > 0) {
        if (key_is(key, length, "seq")) {
            status = read_uint64(c, &seq);
            if (status == 0 && index > 0) {
                if (seq < 1 || seq <= last_seq) return STOP_OTHER; /* schema_violation, seq_not_increasing */
                /* Anything after a terminal reopens the run (the reference checks before the record applies). */
                if (w->terminal_set && kind != K_TERMINAL) w->reopened = 1;
            }
        } else if (key_is(key, length, "protocol")) {
            status = read_string(c, NULL, NULL);
        } else if (key_is(key, length, "time")) {
            status = read_time(c, time);
        } else if (key_is(key, length, "optional")) {
            status = read_bool(c, &optional);
        } else {
            if (++payloads > 1) return STOP_OTHER; /* schema_violation: two payloads */
            if (kind < 0) {
                status = skip_value(c, 0);
            } else {
                if (!key_is(key, length, KIND_NAMES[kind])) return STOP_OTHER; /* missing_payload */
                switch (kind) {
                case K_META: status = index == 0 ? read_meta(w, c) : STOP_OTHER; break; /* duplicate_meta */
                case K_ASSISTANT: status = read_assistant(w, c, seq, time); break;
                case K_USER: status = read_user(w, c, seq); break;
                case K_TOOL_RESULT: status = read_tool_result(w, c, seq, time, before); break;
                case K_DEFERRED: status = read_deferred(w, c, time, before); break;
                case K_DECISION: {
                    text_ref tool;
                    status = read_single_string(w, c, "tool", &tool, NULL);
                    if (status == 0) {
                        status = list_add(&w->approvals, tool);
                    }
                    break;
                }
                case K_CALL_APPROVAL: status = read_call_approval(w, c); break;
                case K_MEMORY: status = read_memory(w, c); break;
                case K_TERMINAL: status = read_terminal(w, c, time); break;
                case K_CLAIM: status = read_claim(w, c, seq, time, last_seq, before); break;
                default: status = STOP_OTHER;
                }
            }
        }
        if (status < 0) return status;
    }
    if (more < 0) return more;
    if (c->p != c->end) return STOP_OTHER;
    if (kind < 0 && !optional) return STOP_OTHER; /* unknown_protocol */
    if (kind >= 0 && payloads == 0) return STOP_OTHER; /* missing_payload */
    if (w->any_terminal && (kind == K_USER || kind == K_ASSISTANT)) w->turn_after_terminal = 1;
    if (!time->dated && time->text_length == 0) w->undated++;
    *seq_out = seq;
    return 0;
}

/* Whether ``length`` bytes at ``p`` are valid UTF-8 (a tool's input is kept as the line holds it). */
static int valid_utf8(const unsigned char *p, Py_ssize_t length) {
    const unsigned char *end = p + length;
    while (p < end) {
        unsigned char lead = *p;
        int n = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3
                : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
        if (n == 0 || end - p < n) return 0;
        for (int i = 1; i < n; i++) {
            if ((p[i] & 0xC0) != 0x80) return 0;
        }
        if ((lead == 0xE0 && p[1] < 0xA0) || (lead == 0xED && p[1] >= 0xA0) || (lead == 0xF0 && p[1] < 0x90) ||
            (lead == 0xF4 && p[1] >= 0x90))
            return 0;
        p += n;
    }
    return 1;
}
