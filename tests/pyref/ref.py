# NumPy and PyTorch references for the kernels of this folder
# (tests/cli/pyref.sh); each takes the inputs and args by name.
import numpy as np


def softmax_ref(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def broken_ref(x, N):
    y = softmax_ref(x)
    return y[:, N]  # an index past the row: IndexError at this line


def pool_ref(x, K):
    import torch
    return torch.nn.functional.avg_pool1d(x.unsqueeze(1), K).squeeze(1)
