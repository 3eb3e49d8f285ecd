"""The validator: each kind of fault in a question file is one problem at its line."""

import pytest

from questions.schema import Question
from questions.tests.factories import question_data, question_yaml, write_question
from questions.validation import main, validate_paths, validate_text, variant_choices


def messages_for(text: str) -> list[str]:
    return [f"{problem.line}: {problem.message}" for problem in validate_text(text, "q.yaml").problems]


def line_of(text: str, fragment: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if fragment in line)


def test_the_factory_question_is_valid():
    assert messages_for(question_yaml()) == []


def test_all_variants_when_few():
    question = Question.from_data(question_data())
    assert variant_choices(question) == [
        {"gpu": gpu, "model": model, "dtype": "bf16"}
        for gpu in ("h100_sxm", "h200")
        for model in ("llama31_8b", "llama33_70b")
    ]


def test_a_fixed_sample_when_many():
    params = {f"p{index}": {"choices": list(range(5))} for index in range(4)}  # 625 variants
    question = Question.from_data(question_data(params=params, derived={}))
    sample = variant_choices(question, limit=64)
    assert len(sample) == 64 and len({tuple(choice.values()) for choice in sample}) == 64
    assert {"p0": 0, "p1": 0, "p2": 0, "p3": 0} in sample
    assert sample == variant_choices(question, limit=64)


def test_a_broken_template_points_at_its_field():
    text = question_yaml(statement="A {{ gpu.hbm_bandwith }} GPU.")
    [message] = messages_for(text)
    assert message.startswith(f"{line_of(text, 'statement:')}: template does not render")
    assert "hbm_bandwith" in message and "[variant gpu=h100_sxm" in message


def test_a_mistake_feedback_template_that_does_not_render_is_a_problem():
    from questions.tests.factories import BASE_QUESTION

    parts = [dict(part) for part in BASE_QUESTION["parts"]]
    parts[0] = {**parts[0], "mistakes": [{"answer": "weight_bytes * 8 / gpu.hbm_bandwidth",
                                          "feedback": "Bits on a {{ 'fast' if gpu else 'slow' }} GPU."}]}
    text = question_yaml(parts=parts)
    messages = messages_for(text)
    assert any("template does not render" in message and message.startswith(f"{line_of(text, 'Bits on a')}:")
               for message in messages), messages
    parts[0]["mistakes"][0]["feedback"] = "Bits, on a {{ gpu.name }}."
    assert messages_for(question_yaml(parts=parts)) == []


def test_bad_latex_in_a_hint_is_a_problem():
    text = question_yaml(hints=["Use $\\frac{W}{$."])
    [message] = messages_for(text)
    assert message.startswith(f"{line_of(text, 'Use $')}: cannot convert")


def test_a_derived_value_with_mixed_dimensions_is_a_problem():
    text = question_yaml(derived={"weight_bytes": "model.params * dtype.bytes + 1 * ms", "floor": "1 * ms"})
    messages = messages_for(text)
    line = line_of(text, "weight_bytes: model.params")
    assert any(message.startswith(f"{line}: cannot build the variant") for message in messages), messages


def test_a_bad_part_spec_points_at_the_key_the_kind_names():
    parts = question_data()["parts"]
    parts[1]["symbols"]["d"]["in"] = "FLOP/s"
    text = question_yaml(parts=parts)
    [message] = messages_for(text)
    assert message.startswith(f"{line_of(text, '    d:')}: part 'kv_per_token': SpecError: symbols.d")


def test_a_mistake_equal_to_the_answer_is_a_problem():
    parts = question_data()["parts"]
    parts[0]["mistakes"] = [{"answer": "floor", "feedback": "Same as the answer."}]
    text = question_yaml(parts=parts)
    messages = messages_for(text)
    assert any("mistake" in message and "graded correct" in message for message in messages), messages


def test_a_reference_in_the_wrong_dimension_is_a_problem():
    parts = question_data()["parts"]
    parts[0]["answer"] = "weight_bytes"  # bytes, but the unit is ms
    assert messages_for(question_yaml(parts=parts)) != []


def test_the_solution_must_quote_each_numeric_reference():
    text = question_yaml(solution="The floor is weights over bandwidth.\n")
    [message] = messages_for(text)
    assert "does not quote part 'floor'" in message and "{{ answers.floor | ms }}" in message


def test_a_check_that_does_not_hold_is_a_problem():
    checks = [{"expr": "weight_bytes", "equals": "99 GB", "when": {"model": "llama31_8b"}}]
    text = question_yaml(checks=checks)
    [message] = messages_for(text)
    assert message.startswith(
        f"{line_of(text, 'expr: weight_bytes')}: check 'weight_bytes' gives 16.06 GB, expected 99 GB"
    )


def test_a_check_in_the_wrong_dimension_is_a_problem():
    checks = [{"expr": "weight_bytes", "equals": "16 ms"}]
    [message] = messages_for(question_yaml(checks=checks))
    assert "cannot be computed" in message


def test_an_unknown_catalogue_key_is_a_problem():
    params = question_data()["params"]
    params["gpu"]["choices"] = ["h100_sxm", "h100_pcie"]
    [message] = messages_for(question_yaml(params=params))
    assert "'h100_pcie' is not in the gpus catalogue" in message


def test_unquoted_dates_are_a_problem():
    parts = question_data()["parts"]
    parts[2]["model_answer"] = "PLACEHOLDER"
    text = question_yaml(parts=parts).replace("PLACEHOLDER", "2024-06-01")
    assert messages_for(text) == [
        f"{line_of(text, '2024-06-01')}: date value datetime.date(2024, 6, 1): quote it to keep it text"
    ]


def test_folder_and_file_name_must_match(tmp_path):
    path = write_question(tmp_path)
    wrong_folder = tmp_path / "kv-cache" / path.name
    wrong_folder.parent.mkdir()
    path.rename(wrong_folder)
    [report] = validate_paths([wrong_folder])
    assert [problem.message for problem in report.problems] == ["topic 'roofline' but the file is in folder 'kv-cache'"]
    renamed = path.parent / "1-decode.yaml"
    renamed.write_text(question_yaml())
    [report] = validate_paths([renamed])
    assert [problem.message for problem in report.problems] == ["file name should be '001-decode-floor-test.yaml'"]


def test_slugs_are_unique_across_files(tmp_path):
    first = write_question(tmp_path)
    second = write_question(tmp_path, seed=2)
    reports = validate_paths([first, second])
    assert reports[0].ok
    assert [problem.message for problem in reports[1].problems] == [
        f"slug 'decode-floor-test' is also used by {reports[0].path}"
    ]


def test_a_seed_is_asked_once_per_kind_of_parts(tmp_path):
    first = write_question(tmp_path)
    second = write_question(tmp_path, slug="another-take")
    reports = validate_paths([first, second])
    kinds = ", ".join(sorted({part.kind for part in reports[0].question.parts}))
    assert [problem.message for problem in reports[1].problems] == [
        f"seed 1 with parts of kinds {kinds} is also used by {reports[0].path}"
    ]


def test_command_line_prints_problems_and_exits_non_zero(tmp_path, capsys):
    good = write_question(tmp_path)
    bad = write_question(tmp_path, slug="broken", seed=3, difficulty=5)
    assert main([str(good)]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith(": OK")
    assert main([str(good), str(bad)]) == 1
    output = capsys.readouterr().out
    assert f"{bad}:5: difficulty 5 must be 1, 2 or 3" in output or ":5: difficulty 5 must be 1, 2 or 3" in output
    assert "1 of 2 files OK" in output


@pytest.mark.parametrize("value", [0, 136, "1"])
def test_seed_out_of_range(value):
    assert any("seed" in message for message in messages_for(question_yaml(seed=value)))


def test_files_checked_in_parallel_report_what_one_process_reports(tmp_path):
    good = [write_question(tmp_path / str(n), slug=f"decode-floor-{n}", seed=n + 1) for n in range(4)]
    bad = write_question(tmp_path / "bad", slug="decode-floor-bad", seed=9, difficulty=0)
    paths = [*good, bad]
    alone = validate_paths(paths, jobs=1)
    together = validate_paths(paths, jobs=2)
    assert [(r.path, [p.message for p in r.problems]) for r in together] == \
        [(r.path, [p.message for p in r.problems]) for r in alone]
    assert [r.question.slug if r.question else None for r in together] == \
        [r.question.slug if r.question else None for r in alone]
    assert together[-1].problems and not any(r.problems for r in together[:-1])
