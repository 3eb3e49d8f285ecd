"""Labs: questions that carry data (tables, traces, event logs, charts) made by a trusted,
deterministic generator beside the question file. FORMAT.md, "Labs", is the authors'
contract; `generator` holds the generator contract and the per-process cache,
`artifacts` the typed artifacts, `display` how a page shows them (`charts` draws
a chart), `checks` what validation adds."""

from questions.labs.artifacts import (
    ArtifactError,
    ChartArtifact,
    EventLogArtifact,
    Series,
    TableArtifact,
    TraceArtifact,
    TraceEvent,
    Track,
)
from questions.labs.display import RenderedArtifact, render_artifact
from questions.labs.generator import LAB_NAME, Lab, LabInput, LabOutput, cached_lab, run_generator

__all__ = [
    "LAB_NAME", "ArtifactError", "ChartArtifact", "EventLogArtifact", "Lab", "LabInput", "LabOutput",
    "RenderedArtifact", "Series", "TableArtifact", "TraceArtifact", "TraceEvent", "Track", "cached_lab",
    "render_artifact", "run_generator",
]
