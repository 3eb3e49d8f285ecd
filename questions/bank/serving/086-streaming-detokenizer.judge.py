"""Trusted judge for 086-streaming-detokenizer (part ``stream``): reviewed code, never
sent to the sandbox.

The toy tokenizer: ids 0-255 are single bytes, id 256 + i is the byte string merges[i].
Each case pushes a token stream and finishes. ``reference_deltas`` streams as eagerly
as the rules allow: after each push, the text of the complete UTF-8 characters
received, cut at the earliest complete stop string, else minus the longest tail that
is a proper prefix of a stop string. A candidate may be lazier, so ``check`` asks three
things: every prefix of the stream is a prefix of the final text (nothing is ever
taken back: no U+FFFD, no piece of a stop string); whenever the bytes received end on a
character boundary, everything before a completed stop string has been streamed, and
short of one, all but at most the last ``L - 1`` characters of the text (``L`` the
longest stop string's length; 0 without stop strings); and the whole stream adds up
to the final text. Streams are valid UTF-8 as a whole.

``L - 1`` is the bound, not the minimal holdback, because it is what engines ship: vLLM
holds back ``max(len(s) for s in stop) - 1`` characters on every step
(``stop_buffer_length`` in its detokenizer), which never sends a stop prefix and costs at
most that many characters of latency. The offset-window decoder (which waits until a
token ends on a character boundary), the eager one and vLLM's all pass; one that holds
back ``L`` characters or more does not.
"""

from grading.judge import Call, Case, Judge
from grading.judge.compare import compare_call_results

WORDS = ["the", "cache", " ", " ", "token", "stream", ",", ".", "\n", "é", "naïve", "中文", "字",
         "😀", "👍🏽", "🚀", "∑", "ok", "→", "ß"]


def complete_text(data: bytes) -> str:
    """The longest prefix of ``data`` that is whole UTF-8 characters, decoded."""
    for cut in range(len(data), max(-1, len(data) - 4), -1):
        try:
            return data[:cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    raise ValueError("the test stream is not valid UTF-8")


def visible_length(text: str, stops: list[str]) -> tuple[int, bool]:
    """How much of ``text`` may be streamed, and whether a stop string ended it."""
    found = [text.find(stop) for stop in stops if stop and stop in text]
    if found:
        return min(found), True
    held = 0
    for stop in stops:
        for size in range(1, len(stop)):
            if text.endswith(stop[:size]):
                held = max(held, size)
    return len(text) - held, False


def reference_deltas(merges, stops, token_ids):
    data, streamed, stopped, deltas = b"", 0, False, []
    for token in token_ids:
        if stopped:
            deltas.append("")
            continue
        data += bytes([token]) if token < 256 else bytes(merges[token - 256])
        text = complete_text(data)
        length, stopped = visible_length(text, stops)
        deltas.append(text[streamed:length])
        streamed = length
    deltas.append("" if stopped else complete_text(data)[streamed:])  # finish()
    return deltas


def tokenize(rng, data: bytes, merges: list, longest: int = 5) -> list[int]:
    """Cut ``data`` into random chunks of 1..longest bytes; multi-byte chunks become
    merges (shared across the case), so characters split at random places."""
    ids, start = [], 0
    while start < len(data):
        size = int(rng.integers(1, longest + 1))
        chunk = list(data[start:start + size])
        if len(chunk) == 1:
            ids.append(chunk[0])
        else:
            if chunk not in merges:
                merges.append(chunk)
            ids.append(256 + merges.index(chunk))
        start += size
    return ids


def _text(rng, words: list[str], count: int) -> str:
    return "".join(words[int(index)] for index in rng.integers(len(words), size=count))


def _case(name, group, merges, stops, ids, extra_pushes: int = 0):
    calls = [Call("push", (int(token),)) for token in ids] + [Call("push", (ord("x"),))] * extra_pushes
    return Case(name, group, (merges, stops), calls=tuple(calls) + (Call("finish"),))


def _boundaries(case) -> list[bool]:
    """For each call: whether the bytes pushed so far are whole UTF-8 characters."""
    merges = case.args[0]
    data, flags = b"", []
    for call in case.calls:
        if call.method == "push":
            token = call.args[0]
            data += bytes([token]) if token < 256 else bytes(merges[token - 256])
        try:
            data.decode("utf-8")
            flags.append(True)
        except UnicodeDecodeError:
            flags.append(False)
    return flags


def _owed(case) -> list[tuple[int, bool]]:
    """For each call: the length of the text of the complete characters received (the
    text before the earliest stop string once one completed), and whether one has."""
    merges, stops = case.args
    data, stopped, cut, owed = b"", False, 0, []
    for call in case.calls:
        if call.method == "push" and not stopped:
            token = call.args[0]
            data += bytes([token]) if token < 256 else bytes(merges[token - 256])
            text = complete_text(data)
            cut, stopped = visible_length(text, stops)
            if not stopped:
                cut = len(text)
        owed.append((cut, stopped))
    return owed


def holdback_bound(stops) -> int:
    """The most characters a decoder may hold back short of a stop: the longest stop
    string's length minus one (vLLM's ``stop_buffer_length``), 0 without stops."""
    return max((len(stop) - 1 for stop in stops if stop), default=0)


def _splits_a_character(merges, ids) -> bool:
    """Whether some token ends inside a multi-byte character."""
    data = b""
    for token in ids:
        data += bytes([token]) if token < 256 else bytes(merges[token - 256])
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False


class StreamJudge(Judge):
    def examples(self):
        emoji = list("😀".encode())  # F0 9F 98 80
        return [
            Case("an emoji split across two tokens", "utf8_split", ([emoji[:2], emoji[2:]], []), calls=(
                Call("push", (ord("H"),)), Call("push", (ord("i"),)), Call("push", (ord(" "),)),
                Call("push", (256,)), Call("push", (257,)), Call("finish"),
            )),
            Case("a stop string arriving in pieces", "stop", ([list(b"EN"), list(b"D!")], ["END"]), calls=(
                Call("push", (ord("o"),)), Call("push", (ord("k"),)), Call("push", (ord("E"),)),
                Call("push", (ord("x"),)), Call("push", (256,)), Call("push", (257,)),
                Call("push", (ord("z"),)), Call("finish"),
            )),
        ]

    def hidden_cases(self, rng):
        ascii_words = [word for word in WORDS if word.isascii()]
        cases = []
        merges = []
        cases.append(_case("ASCII words and merges", "basic", merges, [],
                           tokenize(rng, _text(rng, ascii_words, 30).encode(), merges)))
        for number in range(2):
            while True:
                merges = []
                ids = tokenize(rng, _text(rng, WORDS, 25).encode(), merges)
                if _splits_a_character(merges, ids):
                    break
            cases.append(_case(f"emoji, CJK and accents split at random bytes ({number + 1})", "utf8_split",
                               merges, [], ids))
        # An ASCII stop string with decoy prefixes before it; then one that never completes.
        stop = "".join(rng.choice(list("STOPXYZ"), size=4))
        before = _text(rng, ascii_words, 8) + stop[:2] + _text(rng, ascii_words, 3) + stop[:3] + " "
        merges = []
        # A token boundary inside the stop string, so a decoder that does not hold back a
        # stop prefix always leaks its first letters (one token could otherwise hold it all).
        cut = int(rng.integers(1, len(stop)))
        ids = (tokenize(rng, (before + stop[:cut]).encode(), merges)
               + tokenize(rng, (stop[cut:] + _text(rng, ascii_words, 4)).encode(), merges))
        cases.append(_case("a stop string after decoy prefixes, then more pushes", "stop", merges,
                           ["\n\n\n", stop], ids, extra_pushes=3))
        merges = []
        ids = tokenize(rng, (_text(rng, ascii_words, 10) + stop[:3]).encode(), merges)
        cases.append(_case("the stream ends on a stop prefix: finish flushes it", "stop", merges, [stop], ids))
        # Stop strings with multi-byte characters, their bytes split across tokens.
        for number, stop in enumerate(("🚀END", "中文。")):
            merges = []
            text = _text(rng, WORDS, 8) + stop[:1] + _text(rng, WORDS, 4) + stop + _text(rng, WORDS, 3)
            ids = tokenize(rng, text.encode(), merges)
            cases.append(_case(f"a stop string with multi-byte characters ({number + 1})", "stop_utf8", merges,
                               [stop], ids))
        return cases

    def reference(self, case):
        merges, stops = case.args
        return reference_deltas(merges, stops, [call.args[0] for call in case.calls if call.method == "push"])

    def check(self, case, got, expected):
        return self._stream_problem(case, got, expected, finished=True)

    def check_partial(self, case, got, expected):
        return self._stream_problem(case, got, expected, finished=False)

    def _stream_problem(self, case, got, expected, finished):
        """The rules over ``got``, the deltas of the first calls (all of them when
        ``finished``); None when they hold so far."""
        wanted = len(expected) if finished else len(got)
        if (not isinstance(got, list) or len(got) != wanted or len(got) > len(expected)
                or not all(isinstance(item, str) for item in got)):
            return compare_call_results(case.calls, got, expected)  # says what is malformed
        final = "".join(expected)
        on_boundary = _boundaries(case)
        owed = _owed(case)
        allowed = holdback_bound(case.args[1])
        streamed = ""
        for index, (call, delta) in enumerate(zip(case.calls, got)):
            where = f"call {index + 1} of {len(case.calls)} (.{call.method})"
            streamed += delta
            if not final.startswith(streamed):
                return (f"{where} streamed {delta!r}, which the final text does not continue with: "
                        "streamed text can never be taken back")
            text_length, stopped = owed[index]
            if call.method != "push" or not on_boundary[index]:
                continue
            if stopped and len(streamed) < text_length:
                return (f"after {where} a stop string has completed, yet {text_length - len(streamed)} "
                        "characters before it are still held back")
            if not stopped and len(streamed) < text_length - allowed:
                return (f"after {where} the bytes received end on a character boundary, yet "
                        f"{text_length - len(streamed)} characters are still held back (at most {allowed}, "
                        "the longest stop string's length minus one, may be)")
        if finished and streamed != final:
            return f"the stream adds up to {len(streamed)} characters; expected {len(final)}"
        return None


JUDGES = {"stream": StreamJudge()}
