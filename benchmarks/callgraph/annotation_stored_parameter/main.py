from typing import Optional

class Param:
    def hint(self):
        return 1

class Error:
    def __init__(self, param: Optional["Param"] = None):
        self.param = param

    def message(self):
        return self.param.hint()
