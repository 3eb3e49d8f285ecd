"""Trusted judge for 120-speculative-verifier (part ``verify``): reviewed code, never sent
to the sandbox.

A verifier is random, so the hidden cases test it twice over.

1. Exact checks (they never fail a correct verifier): the output's shape and padding;
   every emitted token but the last equals the draft at its position; between 1 and
   n + 1 tokens per row; an accepted draft has p > 0; a rejected draft had p < q; the
   token emitted at a rejection lies in the residual's support (p > q); the last token
   of a fully accepted row has p > 0 at position n (so a bonus drawn from the wrong
   position's distribution, which the tests fill with junk, is caught every time).
2. Statistical checks: each scenario repeats one (p, q) configuration over N rows with
   drafts sampled from q on this side. Under a lossless verifier, the count of every
   token at every position is Binomial(n, p_j(x)) given the n rows that reached that
   position, and the count of acceptances at position j is Binomial(n, alpha_j). Each
   count must lie within the Hoeffding bound t = sqrt(n / 2 * ln(2 / delta_check)).
   With delta_check = FALSE_REJECTION / (number of checks), a union bound gives a
   correct verifier a false-rejection probability below FALSE_REJECTION = 1e-7 per
   submission (the question promises below 1e-6). The bound needs no approximation:
   Hoeffding holds for any n, conditionally on n.
3. The far-from-q scenario is redrawn until, at position 0, the subtle bias that samples
   the residual's support in proportion to p instead of p - q shifts some token's
   expected count by at least two bounds; that verifier then fails with probability
   above 1 - 1e-9 on every seed, not just on most.
"""

import math

import numpy as np

from grading.judge import Case, Judge

VOCAB = 6
DRAFT = 3
ROWS = 20_000
FALSE_REJECTION = 1e-7  # per submission, all statistical checks together
STATISTICAL_CASES = 3


def _distribution(rng, zero: int | None = None) -> np.ndarray:
    probs = rng.dirichlet(np.ones(VOCAB))
    if zero is not None:
        probs[zero] = 0.0
    return probs / probs.sum()


def _scenario(rng, *, close: bool):
    """Per-position (p, q) with p_j having one zero-probability token; `close` makes p a
    mixture leaning on q (high acceptance, so rows reach the bonus)."""
    targets, drafts = [], []
    for _ in range(DRAFT):
        while True:
            q = _distribution(rng)
            p = _distribution(rng, zero=int(rng.integers(VOCAB)))
            if close:
                p = 0.75 * q + 0.25 * p
                p[int(rng.integers(VOCAB))] = 0.0
                p /= p.sum()
            total_variation = 0.5 * np.abs(p - q).sum()
            if (0.1 if close else 0.3) <= total_variation <= (0.3 if close else 0.7):
                break
        targets.append(p)
        drafts.append(q)
    targets.append(_distribution(rng, zero=int(rng.integers(VOCAB))))  # the bonus position
    return np.array(targets, dtype=np.float32), np.array(drafts, dtype=np.float32)


def _checks_per_scenario() -> int:
    """Token counts at every position plus acceptance counts at every draft position."""
    return (DRAFT + 1) * VOCAB + DRAFT


def _bound(n: int) -> float:
    """The Hoeffding bound each count must stay within (module docstring)."""
    per_check = FALSE_REJECTION / STATISTICAL_CASES / _checks_per_scenario()
    return math.sqrt(n / 2 * math.log(2 / per_check))


def _separates_support_bias(targets, drafts) -> bool:
    """Whether position 0 tells the residual max(0, p - q) apart from the subtle bias that
    samples the residual's support in proportion to p: some token's expected count over
    ROWS rows must move by at least two bounds, so that verifier fails (Hoeffding, one
    side) with probability below delta_check / 2 on every seed. Without this draw-time
    condition about one seed in 3,000 gave (p, q) where the two nearly coincide."""
    p, q = targets[0].astype(np.float64), drafts[0].astype(np.float64)
    residual = np.maximum(p - q, 0.0)
    in_support = np.where(p > q, p, 0.0)
    shift = np.abs(residual - residual.sum() * in_support / in_support.sum()).max()
    return ROWS * shift >= 2 * _bound(ROWS)


def _batch(rng, targets, drafts, drafted: np.ndarray):
    """Inputs for rows sharing (targets, drafts): drafts sampled from q; positions past a
    row's drafts hold junk (-1 tokens, uniform q, and a one-hot p on a token the real
    bonus distribution never picks)."""
    rows = len(drafted)
    target_probs = np.broadcast_to(targets, (rows, DRAFT + 1, VOCAB)).copy()
    draft_probs = np.broadcast_to(drafts, (rows, DRAFT, VOCAB)).copy()
    draft_tokens = np.full((rows, DRAFT), -1, dtype=np.int64)
    for position in range(DRAFT):
        cumulative = np.cumsum(drafts[position].astype(np.float64))
        sampled = np.searchsorted(cumulative / cumulative[-1], rng.random(rows), side="right")
        live = drafted > position
        draft_tokens[live, position] = np.minimum(sampled[live], VOCAB - 1)
    for row_count in range(DRAFT):
        rows_here = drafted == row_count
        never = int(np.flatnonzero(targets[row_count] == 0)[0])
        junk = np.zeros(VOCAB, dtype=np.float32)
        junk[never] = 1.0
        target_probs[rows_here, row_count + 1:] = junk
        draft_probs[rows_here, row_count:] = np.float32(1.0 / VOCAB)
    seed = int(rng.integers(2**31))
    return (draft_tokens, draft_probs.astype(np.float32), target_probs.astype(np.float32),
            drafted.astype(np.int64), seed)


class VerifierJudge(Judge):
    def examples(self):
        q = np.array([0.5, 0.25, 0.25, 0.0], dtype=np.float32)
        bonus = np.array([0.0, 0.0, 0.0, 1.0], dtype=np.float32)
        return [
            Case("p equals q: both drafts accepted, then the bonus token", "accept_rule", (
                np.array([[0, 2]]), np.array([[q, q]]), np.array([[q, q, bonus]]), np.array([2]), 7)),
            Case("a draft the target never picks is replaced from the residual", "residual", (
                np.array([[0, 1]]), np.array([[[0.5, 0.5, 0.0, 0.0], q]], dtype=np.float32),
                np.array([[[0.0, 1.0, 0.0, 0.0], q, bonus]], dtype=np.float32), np.array([2]), 7)),
            Case("a row that drafted nothing emits one token from position 0", "short_rows", (
                np.array([[-1, -1]]), np.array([[q, q]]),
                np.array([[[0.0, 0.0, 1.0, 0.0], bonus, bonus]], dtype=np.float32), np.array([0]), 7)),
        ]

    def hidden_cases(self, rng):
        while True:  # about 58% of draws separate the subtle bias by two bounds
            targets, drafts = _scenario(rng, close=False)
            if _separates_support_bias(targets, drafts):
                break
        wide = Case(f"{ROWS} rows, 3 drafts each, acceptance about one half", "residual",
                    _batch(rng, targets, drafts, np.full(ROWS, DRAFT)), secret={"targets": targets, "drafts": drafts})
        targets, drafts = _scenario(rng, close=True)
        deep = Case(f"{ROWS} rows, 3 drafts each, most reach the bonus token", "accept_rule",
                    _batch(rng, targets, drafts, np.full(ROWS, DRAFT)), secret={"targets": targets, "drafts": drafts})
        targets, drafts = _scenario(rng, close=True)
        short = Case(f"{ROWS} rows that drafted 0, 1, 2 or 3 tokens", "short_rows",
                     _batch(rng, targets, drafts, rng.integers(0, DRAFT + 1, size=ROWS)),
                     secret={"targets": targets, "drafts": drafts})
        return [wide, deep, short]

    def reference(self, case):
        """A sample from a correct verifier (seeded): exact for the examples, whose
        outcome is certain, and one lossless sample for the hidden cases, which
        validation runs through ``check`` as a self-test of the statistics."""
        return reference_verify(*case.args)

    def check(self, case, got, expected):
        if not isinstance(got, np.ndarray) or got.dtype.kind not in "iu":
            return "return an integer NumPy array of emitted tokens"
        if got.shape != expected.shape:
            return f"the result has shape {got.shape}, expected {expected.shape}"
        if "targets" not in case.secret:  # an example: the outcome is certain
            return (None if np.array_equal(got, expected)
                    else f"the result is {got.tolist()}, expected {expected.tolist()}")
        draft_tokens, draft_probs, target_probs, drafted, _ = case.args
        return (_exact_problem(got.astype(np.int64), draft_tokens, draft_probs, target_probs, drafted)
                or _statistical_problem(got.astype(np.int64), drafted, case.secret["targets"], case.secret["drafts"]))


def _sample(rng, probs: np.ndarray) -> np.ndarray:
    """One draw per row from the rows of ``probs`` (float64, any positive total)."""
    cumulative = np.cumsum(probs, axis=1)
    threshold = rng.random(len(probs)) * cumulative[:, -1]
    return np.minimum((cumulative <= threshold[:, None]).sum(axis=1), probs.shape[1] - 1)


def reference_verify(draft_tokens, draft_probs, target_probs, drafted, seed):
    rng = np.random.default_rng(seed)
    rows, drafts = draft_tokens.shape
    index = np.arange(rows)
    out = np.full((rows, drafts + 1), -1, dtype=np.int64)
    active = np.ones(rows, dtype=bool)
    for position in range(drafts + 1):
        bonus = active & (drafted == position)
        if bonus.any():
            out[bonus, position] = _sample(rng, target_probs[bonus, position].astype(np.float64))
        if position == drafts:
            break
        verifying = active & (drafted > position)
        token = np.clip(draft_tokens[:, position], 0, None)
        p = target_probs[index, position, token].astype(np.float64)
        q = draft_probs[index, position, token].astype(np.float64)
        accept = verifying & (rng.random(rows) * q < p)
        reject = verifying & ~accept
        out[accept, position] = token[accept]
        if reject.any():
            residual = np.maximum(target_probs[reject, position].astype(np.float64)
                                  - draft_probs[reject, position].astype(np.float64), 0.0)
            empty = residual.sum(axis=1) <= 0
            residual[empty] = target_probs[reject, position][empty]
            out[reject, position] = _sample(rng, residual)
        active = accept
    return out


def _exact_problem(out, draft_tokens, draft_probs, target_probs, drafted) -> str | None:
    rows, width = out.shape
    padding = out == -1
    lengths = np.where(padding.any(axis=1), np.argmax(padding, axis=1), width)
    if (padding != (np.arange(width)[None, :] >= lengths[:, None])).any():
        return "emitted tokens must come first in each row, then -1 padding only"
    if ((out < -1) | (out >= draft_probs.shape[2])).any():
        return "a token id is outside the vocabulary"
    wrong_length = (lengths < 1) | (lengths > drafted + 1)
    if wrong_length.any():
        row = int(np.flatnonzero(wrong_length)[0])
        return f"row {row} emitted {lengths[row]} tokens; a row with n drafts emits between 1 and n + 1"
    index = np.arange(rows)
    for position in range(width):
        accepted = lengths > position + 1
        if position < draft_tokens.shape[1]:
            not_draft = accepted & (out[:, position] != draft_tokens[:, position])
            if not_draft.any():
                return (f"row {int(np.flatnonzero(not_draft)[0])}: the token at position {position} is not the draft, "
                        "yet tokens follow it (stop at the first rejection)")
        last = lengths == position + 1
        tokens = np.clip(out[:, position], 0, None)
        p = target_probs[index, position, tokens].astype(np.float64)
        impossible = (accepted | last) & (p <= 0)
        if impossible.any():
            return (f"row {int(np.flatnonzero(impossible)[0])}: position {position} emitted a token the target "
                    "gives probability 0 there")
        rejected = last & (position < drafted)
        if rejected.any():
            draft = np.clip(draft_tokens[:, position], 0, None)
            p_draft = target_probs[index, position, draft].astype(np.float64)
            q_draft = draft_probs[index, position, draft].astype(np.float64)
            q_token = draft_probs[index, position, tokens].astype(np.float64)
            certain = rejected & (p_draft >= q_draft)
            if certain.any():
                return (f"row {int(np.flatnonzero(certain)[0])}: rejected the draft at position {position} although "
                        "p >= q there, so acceptance was certain")
            outside = rejected & ~(p > q_token)
            if outside.any():
                return (f"row {int(np.flatnonzero(outside)[0])}: after the rejection at position {position} the token "
                        "drawn lies outside the residual max(0, p - q)")
    return None


def _statistical_problem(out, drafted, targets, drafts) -> str | None:
    """Hoeffding checks on token counts and acceptance counts (module docstring)."""
    alphas = np.minimum(targets[:DRAFT], drafts).astype(np.float64).sum(axis=1)
    lengths = (out != -1).sum(axis=1)
    checks = []  # (description, count, n, probability)
    for position in range(DRAFT + 1):
        reached = lengths > position  # rows that emitted a token at this position
        if not reached.any():
            continue
        n = int(reached.sum())
        counts = np.bincount(out[reached, position], minlength=VOCAB)
        for token in range(VOCAB):
            checks.append((f"token {token} at position {position}", int(counts[token]), n,
                           float(targets[position, token])))
        if position < DRAFT:
            verified = reached & (drafted > position)
            accepted = verified & (lengths > position + 1)
            checks.append((f"acceptances at position {position}", int(accepted.sum()), int(verified.sum()),
                           float(alphas[position])))
    per_check = FALSE_REJECTION / STATISTICAL_CASES / _checks_per_scenario()
    for description, count, n, probability in checks:
        if n == 0:
            continue
        bound = _bound(n)
        if abs(count - n * probability) > bound:
            return (f"{description}: {count} of {n} rows, where a lossless verifier gives "
                    f"{n * probability:.0f} +- {bound:.0f} (a correct verifier fails this test with "
                    f"probability below {per_check:.1e})")
    return None


JUDGES = {"verify": VerifierJudge()}
