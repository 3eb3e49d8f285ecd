"""Lab data for 107: two greedy runs of one request, logged step by step, that end in two answers.

Run A ran alone on an idle replica at night; run B ran on the same replica in the afternoon,
alone for its first steps, until a burst of other traffic joined its batch. The debug log
holds, for every step, the tokens in that step's forward pass and the top two tokens with
their logits. The LM head runs in BF16, so every logit is a BF16 number (8 significant
bits): a value in [2^e, 2^(e+1)) is a whole multiple of 2^(e-7), and the printed decimals
are exact.

While the two forward passes have the same shape, the logits are bit-identical. From the
first step whose batch differs, B's logits move by one BF16 ulp here and there (the same
dot products summed in another order), and the tokens still agree because every margin
is several ulps. At the flip step run A's top two tokens are one ulp apart; in B the top
logit is one ulp lower and the runner-up one ulp higher, so B's argmax is A's runner-up,
and from there the two responses are different texts with unrelated logits.

Every value below is measured from the rows generated here, the way a candidate would
measure it from the downloaded table.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta

from questions.labs import ChartArtifact, EventLogArtifact, LabOutput, Series, TableArtifact

# Run A's answer, token by token; each branch is (index, B's tokens from that index on).
ANSWER_A = (
    "The", " outage", " started", " when", " the", " ingress", " controller", " began", " rejecting",
    " new", " connections", " because", " its", " TLS", " certificate", " had", " expired", " at",
    " midnight", ".", " Traffic", " recovered", " after", " the", " renewal", ".", "<eos>",
)
BRANCHES = (
    (7, (" stopped", " accepting", " new", " connections", " because", " its", " TLS", " certificate",
         " had", " expired", " at", " midnight", ".", " Traffic", " recovered", " after", " the",
         " renewal", ".", "<eos>")),
    (11, (" after", " its", " TLS", " certificate", " expired", " at", " midnight", ".", " Traffic",
          " came", " back", " once", " it", " was", " renewed", ".", "<eos>")),
    (14, (" cert", " expired", " overnight", ".", " Connections", " resumed", " after", " the",
          " renewal", ".", "<eos>")),
)
# The runner-up the model logged behind each chosen token (the branch tokens are A's runners-up there).
RUNNER_UP = {
    "The": "An", " outage": " incident", " started": " began", " when": " after", " the": " our",
    " ingress": " load", " controller": " balancer", " began": " stopped", " rejecting": " refusing",
    " new": " incoming", " connections": " requests", " because": " after", " its": " the",
    " TLS": " SSL", " certificate": " cert", " had": " was", " expired": " lapsed", " at": " around",
    " midnight": " 00", ".": ",", " Traffic": " Service", " recovered": " returned", " after": " once",
    " renewal": " rotation", "<eos>": "\n", " stopped": " began", " accepting": " serving",
    " came": " recovered", " back": " up", " once": " after", " it": " the", " was": " got",
    " renewed": " rotated", " cert": " certificate", " overnight": " at", " Connections": " Traffic",
    " resumed": " recovered",
}
PROMPT_TOKENS = (212, 347, 431)
LOG_START_A = datetime(2025, 6, 3, 3, 12, 41, 208_000)
LOG_START_B = datetime(2025, 6, 3, 14, 5, 9, 517_000)


def _ulp(value: float) -> float:
    """One BF16 unit in the last place at a positive normal value: 2^(e - 7) in [2^e, 2^(e+1))."""
    return 2.0 ** (math.floor(math.log2(value)) - 7)


def _pair(rng, margin_ulps: int) -> tuple[float, float]:
    """A top logit and a runner-up `margin_ulps` BF16 ulps below it, both in one binade with room for +-1 ulp."""
    exponent = 3 if rng.random() < 0.4 else 4  # logits between 8 and 32
    ulp = 2.0 ** (exponent - 7)
    top_units = rng.randrange(128 + margin_ulps + 2, 254)
    return top_units * ulp, (top_units - margin_ulps) * ulp


def _quoted(token: str | None) -> str | None:
    return None if token is None else json.dumps(token)


def _rows(rng, tokens_a, tokens_b, batch_a, batch_b, first_bit, flip):
    """One row per step: each run's forward-pass tokens, chosen token and logit, runner-up and logit."""
    rows, logits_a, logits_b = [], [], []
    for step in range(max(len(tokens_a), len(tokens_b))):
        if step < flip:
            top, second = _pair(rng, rng.randrange(4, 48))
            pair_a, pair_b = (top, second), (top, second)
            if step >= first_bit:
                ulp = _ulp(top)
                moves = [rng.choice((-1, 0, 0, 1)), rng.choice((-1, 0, 0, 1))]
                if step == first_bit and moves == [0, 0]:
                    moves[rng.randrange(2)] = rng.choice((-1, 1))
                pair_b = (top + moves[0] * ulp, second + moves[1] * ulp)
        elif step == flip:
            top, second = _pair(rng, 1)
            ulp = _ulp(top)
            pair_a, pair_b = (top, second), (second + ulp, top - ulp)
        else:
            pair_a = _pair(rng, rng.randrange(2, 60)) if step < len(tokens_a) else None
            pair_b = _pair(rng, rng.randrange(2, 60)) if step < len(tokens_b) else None
        logits_a.append(pair_a)
        logits_b.append(pair_b)
        cells = []
        for tokens, batch, pair in ((tokens_a, batch_a, pair_a), (tokens_b, batch_b, pair_b)):
            if pair is None:
                cells += [None] * 5
                continue
            token = tokens[step]
            runner_up = tokens_a[step] if tokens is tokens_b and step == flip else RUNNER_UP[token]
            if tokens is tokens_a and step == flip:
                runner_up = tokens_b[step]
            cells += [batch[step], _quoted(token), pair[0], _quoted(runner_up), pair[1]]
        rows.append((step, *cells))
    return rows, logits_a, logits_b


def _log(prompt_tokens: int, steps_a: int, steps_b: int, first_bit: int, burst: int) -> tuple[str, ...]:
    def stamp(start: datetime, ms: float) -> str:
        return (start + timedelta(milliseconds=ms)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]

    fingerprint = "replica=r-17 fingerprint=fp_7d3e0b model=acme-70b-instruct@4c1e9a2 build=2025.05.2 gpu=H100-SXM tp=4"
    request = (f"temperature=0 top_p=1 seed=none max_tokens=64 prompt_tokens={prompt_tokens}"
               " prompt_sha256=9f2c41d0e6")
    return (
        f"{stamp(LOG_START_A, 0)} INFO  [api] req=cmpl-a81f {request}",
        f"{stamp(LOG_START_A, 1)} INFO  [engine] req=cmpl-a81f {fingerprint}",
        f"{stamp(LOG_START_A, 2)} INFO  [scheduler] req=cmpl-a81f prefix_cache_hit_tokens=0 running=1 waiting=0",
        f"{stamp(LOG_START_A, 40 + 23 * steps_a)} INFO  [api] req=cmpl-a81f finished"
        f" completion_tokens={steps_a} finish_reason=stop",
        f"{stamp(LOG_START_B, 0)} INFO  [api] req=cmpl-b207 {request}",
        f"{stamp(LOG_START_B, 1)} INFO  [engine] req=cmpl-b207 {fingerprint}",
        f"{stamp(LOG_START_B, 2)} INFO  [scheduler] req=cmpl-b207 prefix_cache_hit_tokens=0 running=1 waiting=0",
        f"{stamp(LOG_START_B, 40 + 23 * first_bit)} INFO  [scheduler] admitted {burst - 1} requests"
        f" (tenant=t-0931 batch job) running={burst} waiting={3 * burst}",
        f"{stamp(LOG_START_B, 60 + 31 * steps_b)} INFO  [api] req=cmpl-b207 finished"
        f" completion_tokens={steps_b} finish_reason=stop",
    )


def generate(variant) -> LabOutput:
    rng = variant.rng
    peak = int(variant.choices["peak_batch"])
    flip, branch = BRANCHES[rng.randrange(len(BRANCHES))]
    first_bit = flip - rng.randrange(4, min(flip, 9))
    prompt_tokens = PROMPT_TOKENS[rng.randrange(len(PROMPT_TOKENS))]
    tokens_a = ANSWER_A
    tokens_b = ANSWER_A[:flip] + branch
    batch_a = [prompt_tokens] + [1] * (len(tokens_a) - 1)
    batch_b = [prompt_tokens] + [1] * (first_bit - 1)
    batch_b += [rng.randrange(peak // 2, peak + 1) for _ in range(len(tokens_b) - first_bit)]
    rows, logits_a, logits_b = _rows(rng, tokens_a, tokens_b, batch_a, batch_b, first_bit, flip)

    # Measured from the rows, as a candidate would.
    both = [(a, b) for a, b in zip(logits_a, logits_b) if a is not None and b is not None]
    measured_first_bit = next(step for step, (a, b) in enumerate(both) if a != b)
    measured_flip = next(step for step in range(len(rows)) if rows[step][2] != rows[step][7])
    agreeing = both[measured_first_bit:measured_flip]
    drift = max(max(abs(a[0] - b[0]), abs(a[1] - b[1])) for a, b in agreeing)
    drift_all = max(abs(a[0] - b[0]) for a, b in both)
    margin = logits_a[measured_flip][0] - logits_a[measured_flip][1]
    margin_prev = logits_a[measured_flip - 1][0] - logits_a[measured_flip - 1][1]
    flip_ulp = _ulp(logits_a[measured_flip][0])

    columns = ("step", "a_batch_tokens", "a_token", "a_logit", "a_runner_up", "a_runner_up_logit",
               "b_batch_tokens", "b_token", "b_logit", "b_runner_up", "b_runner_up_logit")
    artifacts = (
        EventLogArtifact("requests", _log(prompt_tokens, len(tokens_a), len(tokens_b), first_bit,
                                               batch_b[first_bit]),
                         title="The two requests in the API server's and the engine's logs"),
        TableArtifact("greedy-steps", columns, rows,
                      title="Debug log: each step's forward-pass tokens and top two logits, run A and run B"),
        # The picture of what differs between the runs: the batch each step ran in, read
        # from the same rows (the prefill step is left out: its prompt dwarfs the rest).
        ChartArtifact("batch-per-step", "decode step", "tokens in the step's forward pass",
                      (Series("run A", tuple((row[0], row[1]) for row in rows[1:] if row[1] is not None)),
                       Series("run B", tuple((row[0], row[6]) for row in rows[1:] if row[6] is not None))),
                      title="Tokens in each decode step's batch, run A and run B"),
    )
    values = {
        "prompt_tokens": prompt_tokens,
        "first_bit_step": measured_first_bit,
        "first_token_step": measured_flip,
        "agreeing_steps": measured_flip - measured_first_bit,
        "drift": drift,
        "drift_all": drift_all,
        "margin": margin,
        "margin_prev": margin_prev,
        "flip_ulp": flip_ulp,
        "flip_logit": logits_a[measured_flip][0],
        "flip_runner_up_logit": logits_a[measured_flip][1],
        "flip_b_logit": logits_b[measured_flip][0],
        "flip_b_runner_up_logit": logits_b[measured_flip][1],
        "batch_at_first_bit": batch_b[measured_first_bit],
        "steps_a": len(tokens_a),
        "steps_b": len(tokens_b),
    }
    return LabOutput(artifacts, values)
