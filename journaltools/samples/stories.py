"""The stories the bundled samples tell, for both generations: each a run the runtime could have written (a
completed run with tools, a run waiting on a deferred call, a torn tail, a refused journal, ...), built record by
record with ``samples.builder`` and, where the story needs it, damaged line by line afterwards."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from journaltools.goencoding.time import format_go_time
from journaltools.protocol.encode import encode_record
from journaltools.protocol.generations import AUGUST, NEWEST, Generation
from journaltools.protocol.kinds import Fingerprint
from journaltools.samples.builder import (
    JournalBuilder,
    calls_of,
    claimant,
    epoch_ns,
    fingerprint_for,
    provider,
    text,
    thinking,
    tool_use,
)

#: Every sample starts some minutes after this, its meta written in a +01:00 zone (Europe in winter).
_EPOCH_NS: Final = epoch_ns(datetime(2026, 11, 29, 8, 0, 0, tzinfo=UTC))

_ZONE_SECONDS: Final = 3600

_NANOS: Final = 1_000_000_000


def sample_fingerprint(model: str = "claude-sonnet-4-6", *, thinking_mode: str = "off") -> Fingerprint:
    """The fingerprint the samples carry: the real eight fields, hashes by the runtime's recipes."""
    return fingerprint_for(model, thinking_mode=thinking_mode)


@dataclass
class Sample:
    """One sample's journal and how it reached the disk."""

    run: str
    story: str
    journal: JournalBuilder
    clock_ns: int
    #: Record counts after which a process ended: the next record is appended by a newly opened writer.
    exits: list[int] = field(default_factory=list)
    #: What happened to the bytes after the writers were done (a crash, a hand edit); None for none.
    damage: Callable[[bytes], bytes] | None = None

    def tick(self, seconds: float) -> None:
        # A sub-second remainder keeps the times realistic (Go writes every nanosecond it has).
        self.clock_ns += int(seconds * _NANOS) + 137_204_911

    def now(self) -> str:
        return format_go_time(self.clock_ns)

    def exit(self) -> None:
        """The process writing the journal stopped here (its writer is closed)."""
        self.exits.append(len(self.journal.records))

    def resume(self, host: str = "ops-7", pid: int = 48213) -> None:
        """A later process opens the journal and claims the run, as ``fisk-ai --resume`` does."""
        self.exit()
        self.tick(840)
        self.journal.claim(claimant("fisk", host, pid), self.now())


#: The run ids of the newest line's samples begin with this (the August ones are the bare story names).
_NEWEST_PREFIX: Final = "newest-"


def _sample(
    run: str,
    story: str,
    minute: int,
    prompt: str,
    *,
    fingerprint: Fingerprint | None = None,
    generation: Generation = AUGUST,
    **meta: object,
) -> Sample:
    clock = _EPOCH_NS + minute * 60 * _NANOS + 512_331_907
    if generation is not AUGUST:
        run, story, meta = _NEWEST_PREFIX + run, f"newest line: {story}", {"agent": "ops", **meta}
    journal = JournalBuilder(
        run,
        prompt=prompt,
        created=format_go_time(clock, _ZONE_SECONDS),
        fingerprint=fingerprint or sample_fingerprint(),
        generation=generation,
        **meta,  # type: ignore[arg-type]
    )
    sample = Sample(run, story, journal, clock)
    if generation is not AUGUST:

        def clock_of_records() -> str:
            # The runner dates each record as it journals it: a few seconds apart, in UTC.
            sample.tick(1 + len(journal.records) * 7 % 5)
            return sample.now()

        journal.clock = clock_of_records
        journal.records.clear()  # the meta record again, dated by that clock
        journal.add(journal.meta)
    return sample


def _replace_line(number: int, replacement: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    """Damage that rewrites line ``number`` (1-based) of the journal."""

    def damage(data: bytes) -> bytes:
        lines = data.split(b"\n")
        lines[number - 1] = replacement(lines[number - 1])
        return b"\n".join(lines)

    return damage


def sample_stories() -> Iterator[Sample]:
    yield from _stories_of(AUGUST)
    yield from (sample for sample in _stories_of(NEWEST) if not sample.run.endswith("version-mismatch"))
    yield _provider_kinds()


def _provider_kinds() -> Sample:
    s = _sample(
        "provider-kinds",
        "one call of each provider (application, builtin, mcp, custom, remote): an application call a policy "
        "denied and a remote call refused (answered, never run), an MCP call that ran; completed",
        95,
        "Tidy the EVENTS stream and file a ticket",
        generation=NEWEST,
        caller="a2a:planner",
    )
    j = s.journal
    calls = calls_of(
        j.assistant(
            tool_use("toolu_01T1purge", "stream_purge", {"stream": "EVENTS"}),
            tool_use("toolu_01T2now", "clock_now", {}),
            tool_use("toolu_01T3ticket", "tracker_create", {"title": "EVENTS purged"}),
            tool_use("toolu_01T4ask", "ask_billing_agent", {"q": "is EVENTS billed?"}),
            in_tokens=900,
            out_tokens=140,
        )
    )
    purge, now, ticket, ask = calls
    j.result(purge, "denied by policy: stream_purge needs an approval", is_error=True, dispatched=False)
    j.result(now, "2026-11-29T09:37:00Z", kind="builtin")
    j.result(ticket, "created EVT-118", kind="mcp")
    j.result(ask, "the billing agent refused the call: not a peer", kind="remote", dispatched=False, is_error=True)
    lookup = calls_of(j.assistant(tool_use("toolu_01T5lookup", "runbook_lookup", {"topic": "purge"})))[0]
    j.result(lookup, "purge needs the on-call's approval", kind="custom")
    j.assistant(text("The purge was denied by policy; I filed EVT-118 for the on-call."), in_tokens=400)
    j.terminal("completed")
    return s


def _stories_of(generation: Generation) -> Iterator[Sample]:
    def _sample_of(run: str, story: str, minute: int, prompt: str, **meta: object) -> Sample:
        return _sample(run, story, minute, prompt, generation=generation, **meta)  # type: ignore[arg-type]

    s = _sample_of(
        "completed-with-tools",
        "a one-shot run with thinking on: parallel calls (3 then 2), a tool error, a remote result, cache and "
        "thinking tokens, completed",
        0,
        "List the streams on the production cluster and tell me which ones have no consumers",
        fingerprint=sample_fingerprint(thinking_mode="summarized"),
    )
    j = s.journal
    first = j.assistant(
        thinking("Streams without consumers: list streams, check the cluster first.", b"EqQBCkYIBxgCKkB1"),
        text("I'll list the streams and check the cluster at the same time."),
        tool_use("toolu_01A1streamls", "stream_ls", {"filter": ""}),
        tool_use("toolu_01A2ping", "server_ping", {}),
        tool_use("toolu_01A3incident", "remote_incident_agent", {"prompt": "any open incidents on prod-east?"}),
        in_tokens=1210,
        out_tokens=344,
        cache_create_tokens=5400,
        thinking_tokens=121,
    )
    ls, ping, incident = calls_of(first)
    j.result(ls, "ORDERS\nEVENTS\nAUDIT\nKV_config")
    j.result(ping, "nats: error: no servers responded within 2s", is_error=True)
    j.result(incident, "No open incidents for prod-east.", remote=True)
    second = j.assistant(
        tool_use("toolu_01B1orders", "consumer_ls", {"stream": "ORDERS"}),
        tool_use("toolu_01B2audit", "consumer_ls", {"stream": "AUDIT"}),
        in_tokens=310,
        out_tokens=120,
        cache_read_tokens=5400,
        thinking_tokens=40,
    )
    orders, audit = calls_of(second)
    j.result(audit, "")
    j.result(orders, "orders-processor\norders-audit")
    j.assistant(
        text("AUDIT has no consumers; ORDERS has two. The ping failed, so this is <b>partial</b> & unchecked."),
        in_tokens=250,
        out_tokens=410,
        cache_read_tokens=5710,
    )
    j.terminal("completed")
    yield s

    s = _sample_of(
        "interactive-follow-ups",
        "a chat run (conversation token and caller): follow-ups, two user records in a row (the model call "
        "between them failed) that the fold merges into one message, completed",
        5,
        "",
        interactive=True,
        conversation_token="ctk_live_9Xq2VbLm7Rt4",
        caller="slack:U024BE7LH",
    )
    j = s.journal
    j.assistant(text("I can inspect and operate your NATS streams. What do you need?"), in_tokens=300, out_tokens=25)
    j.user("show me the ORDERS stream")
    info = calls_of(j.assistant(tool_use("toolu_01C1info", "stream_info", {"stream": "ORDERS"})))[0]
    j.result(info, '{"config":{"name":"ORDERS","subjects":["orders.>"]},"state":{"messages":18231}}')
    j.assistant(text("ORDERS holds 18,231 messages on orders.>."), in_tokens=400, out_tokens=30)
    j.user("and its consumers?")
    j.user("hello? are you there")
    consumers = calls_of(
        j.assistant(text("Sorry, that call failed."), tool_use("toolu_01C2ls", "consumer_ls", {"stream": "ORDERS"}))
    )[0]
    j.result(consumers, "orders-processor\norders-audit")
    j.assistant(text("Two consumers: orders-processor and orders-audit."), in_tokens=120, out_tokens=60)
    j.terminal("completed")
    yield s

    s = _sample_of(
        "deferred-waiting",
        "a batch of 3 calls: 2 answered, 1 deferred with a note and a handle (a decision after it), suspended: "
        "the turn is pending with one open deferral",
        10,
        "Raise the ORDERS replicas to 3 through a change request",
    )
    j = s.journal
    batch = j.assistant(
        tool_use("toolu_01D1info", "stream_info", {"stream": "ORDERS"}),
        tool_use("toolu_01D2change", "change_request_open", {"summary": "Raise ORDERS replicas 1 -> 3"}),
        tool_use("toolu_01D3peers", "server_run", {"command": "nats server report jetstream"}),
        in_tokens=1500,
        out_tokens=230,
    )
    info, change, peers = calls_of(batch)
    j.result(info, '{"config":{"num_replicas":1}}')
    j.deferred(change, note="waiting for change approval in ServiceNow", handle="CHG0041293")
    j.result(peers, "3 servers, all current")
    j.decision("server_run")
    j.terminal("suspended")
    yield s

    s = _sample_of(
        "deferred-answered",
        "a deferred call answered later (a supplied tool_result after the suspended terminal), then resumed "
        "with a claim to completion; memory_revisions after the terminal",
        15,
        "Open a change request to purge the DLQ stream, and tell me when it is done",
    )
    j = s.journal
    batch = j.assistant(
        tool_use("toolu_01E1info", "stream_info", {"stream": "DLQ"}),
        tool_use("toolu_01E2change", "change_request_open", {"summary": "Purge DLQ"}),
    )
    info, change = calls_of(batch)
    j.result(info, '{"state":{"messages":412}}')
    j.deferred(change, note="waiting for change approval", handle="CHG0041377")
    j.terminal("suspended")
    s.exit()
    s.tick(1800)
    j.result(change, "CHG0041377 approved by j.smith; DLQ purged (412 messages)")  # supplied by an operator
    s.resume()
    j.assistant(text("CHG0041377 was approved and DLQ is empty now."), in_tokens=1800, out_tokens=90)
    j.terminal("completed")
    j.memory_revisions({"change/CHG0041377": 3, "streams/DLQ": 12})
    yield s

    s = _sample_of(
        "approvals-decisions",
        "standing approvals: decision records (optional:true, as the runtime writes them) after the results of "
        "the calls that needed them, one inside a batch; completed",
        20,
        "Remove the TEST_* streams and restart the stuck server",
    )
    j = s.journal
    rm = calls_of(j.assistant(tool_use("toolu_01F1rm", "stream_rm", {"stream": "TEST_1"})))[0]
    j.result(rm, "removed TEST_1")
    j.decision("stream_rm")
    restart, rm2 = calls_of(
        j.assistant(
            tool_use("toolu_01F2run", "server_run", {"command": "systemctl restart nats"}),
            tool_use("toolu_01F3rm", "stream_rm", {"stream": "TEST_2"}),
        )
    )
    j.result(restart, "restarted")
    j.decision("server_run")
    j.result(rm2, "removed TEST_2")
    j.assistant(text("Removed TEST_1 and TEST_2 and restarted the server."))
    j.terminal("completed")
    yield s

    s = _sample_of(
        "call-approval-waiting",
        "a gated call the operator could not be asked about (suspended with the prompter's message), then an "
        "allow-once call_approval appended while suspended: the call is pending and approved",
        25,
        "Purge the DLQ_2 stream",
    )
    j = s.journal
    purge = calls_of(j.assistant(tool_use("toolu_01G1rm", "stream_rm", {"stream": "DLQ_2"})))[0]
    j.terminal("suspended", "the operator did not answer the prompt")
    s.exit()
    s.tick(300)
    j.call_approval(purge)
    yield s

    s = _sample_of(
        "memory-after-terminal",
        "a served conversation: two turns, each ending in a terminal followed by memory_revisions (newest "
        "wins), a claim between them; the journal ends on memory_revisions",
        30,
        "Remember that the billing cluster is in us-east-2",
        conversation_token="ctk_live_5QmZr8yX2b",
        caller="a2a:billing-bot",
    )
    j = s.journal
    write = calls_of(j.assistant(tool_use("toolu_01H1mem", "kv_get", {"key": "notes"}), cache_create_tokens=2000))[0]
    j.result(write, "stored at revision 7")
    j.assistant(text("Noted."), cache_read_tokens=2000)
    j.terminal("completed")
    j.memory_revisions({"notes": 7})
    s.resume("fisk-1", 733)
    j.user("also that the audit cluster moved to eu-west-1")
    j.assistant(text("Noted as well."), cache_read_tokens=2000)
    j.terminal("completed")
    j.memory_revisions({"notes": 8, "clusters/audit": 1})
    yield s

    s = _sample_of(
        "resumed-mid-batch",
        "the process died after 1 of 3 parallel results; the resume's claim lands between the assistant turn "
        "and its remaining results (inert in the fold), then completed",
        35,
        "Check the three consumers on ORDERS for redeliveries",
    )
    j = s.journal
    c1, c2, c3 = calls_of(
        j.assistant(
            *(tool_use(f"toolu_01J{n}info", "consumer_info", {"consumer": f"c{n}"}) for n in (1, 2, 3)),
            in_tokens=900,
            out_tokens=150,
        )
    )
    j.result(c1, '{"num_redelivered":0}')
    s.resume("ops-9", 51022)
    j.result(c2, '{"num_redelivered":12}')
    j.result(c3, '{"num_redelivered":0}')
    j.assistant(text("Only c2 has redeliveries (12)."))
    j.terminal("completed")
    yield s

    s = _sample_of(
        "next-turn-in-flight",
        "a completed conversation resumed for its next turn: claim, user, an assistant turn with calls, one "
        "result, no terminal. The file rule still says completed (stale terminal); JetStream's says open",
        40,
        "How many messages does EVENTS hold?",
        conversation_token="ctk_live_Hh3kPq0Zs1",
        caller="slack:U7QW3E2KM",
    )
    j = s.journal
    j.assistant(text("EVENTS holds 2.1M messages."))
    j.terminal("completed")
    s.resume("fisk-0", 902)
    j.user("and how far behind is its slowest consumer?")
    _consumers, info = calls_of(
        j.assistant(
            tool_use("toolu_01K1ls", "consumer_ls", {"stream": "EVENTS"}),
            tool_use("toolu_01K2info", "stream_info", {"stream": "EVENTS"}),
        )
    )
    j.result(info, '{"state":{"messages":2100344}}')
    yield s

    s = _sample_of(
        "terminal-suspended",
        "a session rotated by a context reset: the old journal ends suspended, without a message, at a clean "
        "boundary (nothing pending)",
        45,
        "Summarise today's incidents",
    )
    s.journal.assistant(text("Three incidents today; details follow in the new session."))
    s.journal.terminal("suspended")
    yield s

    s = _sample_of(
        "terminal-error",
        "a tool error, then the model call failed: terminal error with the runner's message",
        50,
        "Why is the EVENTS stream lagging?",
    )
    j = s.journal
    info = calls_of(j.assistant(tool_use("toolu_01L1info", "stream_info", {"stream": "EVENT"})))[0]
    j.result(info, "nats: error: stream not found", is_error=True)
    j.terminal("error", 'llm call: POST "https://api.anthropic.com/v1/messages": 529 Overloaded')
    yield s

    s = _sample_of(
        "terminal-budget",
        "the token budget was spent before the turn's tools ran: terminal budget with the runner's message, "
        "the calls left pending",
        55,
        "Summarize every stream's configuration",
        fingerprint=fingerprint_for("claude-sonnet-4-6", max_tokens=20000),
    )
    j = s.journal
    big = calls_of(j.assistant(tool_use("toolu_01M1info", "stream_info", {"stream": "ORDERS"}), in_tokens=9000))[0]
    j.result(big, "config line\n" * 40)
    j.assistant(tool_use("toolu_01M2info", "stream_info", {"stream": "EVENTS"}), in_tokens=11000, out_tokens=400)
    j.terminal("budget", "this conversation has processed 20520 of its 20000 token budget (llm.budget.max_tokens)")
    yield s

    s = _sample_of(
        "terminal-max-iterations",
        "the iteration cap (3) reached after three tool turns: terminal max_iterations; the last turn is "
        "complete, so it is committed",
        60,
        "Find the consumer that is stuck",
        fingerprint=fingerprint_for("claude-haiku-4-5"),
    )
    j = s.journal
    for n in range(3):
        call = calls_of(j.assistant(tool_use(f"toolu_01N{n}info", "consumer_info", {"consumer": f"c{n}"})))[0]
        j.result(call, f'{{"name":"c{n}","num_pending":0}}')
    j.terminal("max_iterations")
    yield s

    s = _sample_of(
        "torn-tail",
        "completed, then the process died while writing memory_revisions: the half-written last line is a "
        "torn tail, dropped by the reader (a warning)",
        65,
        "Count the streams",
    )
    j = s.journal
    j.assistant(text("There are 4 streams."))
    j.terminal("completed")
    torn = j.memory_revisions({"streams": 4})
    j.records.pop()  # its bytes were never completed: only a prefix reached the disk
    line = encode_record(torn)
    s.damage = lambda data, line=line: data + line[: len(line) // 2]
    yield s

    s = _sample_of(
        "resumed-after-torn-tail",
        "a crash mid-write left a torn tool_result; the Go backend's resume appended its claim straight after the "
        "torn bytes (no newline, no truncation), so they became an interior line: the journal is refused",
        70,
        "Check the ORDERS stream",
    )
    j = s.journal
    first_call, second_call = calls_of(
        j.assistant(
            tool_use("toolu_01P1info", "stream_info", {"stream": "ORDERS"}),
            tool_use("toolu_01P2ls", "consumer_ls", {"stream": "ORDERS"}),
        )
    )
    j.result(first_call, '{"state":{"messages":18231}}')
    lost = j.result(second_call, "orders-processor\norders-audit")
    j.records.pop()  # torn: a prefix of it is on disk, glued to the claim
    torn_at = len(j.records)
    s.resume("ops-7", 48999)
    j.result(second_call, "orders-processor\norders-audit")
    j.assistant(text("ORDERS has 18,231 messages and two consumers."))
    j.terminal("completed")
    torn_line = encode_record(lost)[:60]
    s.damage = _insert_before_line(torn_at + 1, torn_line)
    yield s

    s = _sample_of(
        "corrupt-interior",
        "line 3 was overwritten with bytes that are not JSON: interior corruption, the journal is refused",
        75,
        "List the open incidents",
    )
    j = s.journal
    call = calls_of(j.assistant(tool_use("toolu_01Q1inc", "remote_incident_agent", {"prompt": "open incidents?"})))[0]
    j.result(call, "two open", remote=True)
    j.assistant(text("Two incidents are open."))
    j.terminal("completed")
    s.damage = _replace_line(3, lambda line: b'{"seq":3,"protocol":"io.choria.fisk-ai.v1.session.tool_res\x00#garbage')
    yield s

    s = _sample_of(
        "version-mismatch",
        "meta version 2 (a journal from an older runtime): the fold refuses it (unsupported snapshot version)",
        80,
        "Hello from an older runtime",
        version=2,
    )
    s.journal.assistant(text("Hello."))
    s.journal.terminal("completed")
    yield s

    s = _sample_of(
        "unknown-optional-record",
        "a record of a protocol this runtime does not know, flagged optional:true: the fold skips it; completed",
        85,
        "What does <script>alert('xss')</script> do in a tool result?",
    )
    j = s.journal
    call = calls_of(j.assistant(tool_use("toolu_01R1get", "kv_get", {"key": "<script>"})))[0]
    j.result(call, "<script>alert('xss')</script>")
    j.unknown("from_the_future", optional=True)
    j.assistant(text("It is only text here; journal content is shown escaped."))
    j.terminal("completed")
    yield s

    s = _sample_of(
        "noncanonical-line",
        "a hand-edited line with case-variant keys (SEQ, Protocol): the Go decoder reads it, journaltools warns "
        "that it is not the bytes the runtime writes; completed",
        90,
        "Ping the cluster",
    )
    j = s.journal
    ping = calls_of(j.assistant(tool_use("toolu_01S1ping", "server_ping", {})))[0]
    j.result(ping, "3 servers answered")
    j.assistant(
        text("All three servers answered."),
        provider("server_tool_use", {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search"}),
    )
    j.terminal("completed")
    s.damage = _replace_line(
        3, lambda line: line.replace(b'{"seq":', b'{"SEQ":', 1).replace(b'"protocol":', b'"Protocol":', 1)
    )
    yield s


def _insert_before_line(number: int, torn: bytes) -> Callable[[bytes], bytes]:
    """Damage as the Go backend leaves it: ``torn`` bytes without a newline right before line ``number``,
    so that line (the first record the resume appended) is glued onto them."""

    def damage(data: bytes) -> bytes:
        lines = data.split(b"\n")
        lines[number - 1] = torn + lines[number - 1]
        return b"\n".join(lines)

    return damage
