"""NPD301 against a smaller device: 24/48 fits atlas-a2 but not a 910B3 (20/40)."""
# device: atlas-a2-910b3

from torch import nn

from npudsl import core_limit


class Fits(nn.Module):
    @core_limit(24, 48)  # E: NPD301@6
    def everything(self, x):
        return x
