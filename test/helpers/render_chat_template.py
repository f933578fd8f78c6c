"""Renders a chat template the way transformers' apply_chat_template does (the router's render), for golden ids.

stdin: {"template": str, "variables": {...}}; stdout: {"text": str} or {"error": str}.
The environment is transformers' (_compile_jinja_template): an immutable sandbox with trim_blocks, lstrip_blocks and
loopcontrols, tojson without ASCII escaping, raise_exception and strftime_now.
"""
import json
import sys
from datetime import datetime

from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def main():
    request = json.load(sys.stdin)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    try:
        text = env.from_string(request["template"]).render(**request["variables"])
    except TemplateError as err:
        json.dump({"error": str(err)}, sys.stdout)
        return
    json.dump({"text": text}, sys.stdout, ensure_ascii=False)


main()
