import util as u
from util import tool as t

def run():
    u.tool()
    t()
