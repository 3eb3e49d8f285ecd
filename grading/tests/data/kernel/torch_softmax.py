"""A candidate who answers with PyTorch and defines a Triton kernel only to pass the
reading check: it is correct, and must still be refused."""
import torch
import triton


@triton.jit
def unused_kernel(x_ptr):
    pass


def softmax(logits: torch.Tensor) -> torch.Tensor:
    return torch.softmax(logits, dim=-1)
