class Node:
    def parent(self) -> "Node":
        return self

    def name(self):
        return "n"

    def parent_name(self):
        return self.parent().name()
