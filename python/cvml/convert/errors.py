"""Errors of the converter: every problem names the node, its op type, the opset and
the reason, and a model with several problems reports them all at once."""


class ConvertError(Exception):
    """One or more reasons the model cannot be converted; str() is one line a reason."""

    def __init__(self, problems):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def node_problem(node, opset, reason):
    """The one-line message for a node: name, op type, opset and reason."""
    return "node %s (%s, opset %d): %s" % (node.name, node.op, opset, reason)


class Problems:
    """Collects problems so that a model's every unsupported node is listed, not
    only the first; raise_if_any() ends the collecting."""

    def __init__(self, opset):
        self.opset = opset
        self.items = []

    def add(self, node, reason):
        self.items.append(node_problem(node, self.opset, reason))

    def add_text(self, text):
        self.items.append(text)

    def raise_if_any(self):
        if self.items:
            raise ConvertError(self.items)
