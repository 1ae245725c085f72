# A problem written the way KernelBench writes them (a torch Model,
# get_inputs(), get_init_inputs()), small, for tests/cli/pyref.sh: a 1-D
# convolution with a bias, then a ReLU and a sum over the length.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, bias=True)

    def forward(self, x, scale):
        return torch.relu(self.conv(x)).sum(dim=2) * scale


batch_size = 4
in_channels = 3
out_channels = 8
length = 40


def get_inputs():
    return [torch.randn(batch_size, in_channels, length), 2]


def get_init_inputs():
    return [in_channels, out_channels, 5]
