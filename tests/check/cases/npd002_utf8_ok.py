"""UTF-8 with non-ASCII text (und Umlaute: äöü) and a BOM-free first line is fine."""

from torch import nn

from npudsl import on_stream


class Überblick(nn.Module):
    @on_stream("seite")
    def zweig(self, x):
        return x

    def forward(self, x):
        ä = self.zweig(x)
        return ä
