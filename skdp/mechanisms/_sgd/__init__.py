"""What the DP-SGD optimizers share: settings, the loop, privatisation, iterates, steps."""
