from .impl import work
