"""Money arithmetic."""


def apply_discount(value: float, rate: float) -> float:
    """Take `rate` (0.1 = 10 %) off `value`."""
    return value * (1 - rate)


def round_money(value: float) -> str:
    """Format an amount with two decimals."""
    return f"{value:.2f}"
