"""The serve workload's load and what it asks the server first: the API found at a URL, its
models and the name it gives itself; prompts of a given length from a fixed seed (a unique
salt at the start of each for a cold cache, a long shared prefix primed once for a warm
one); and a closed-loop level of concurrent requests, warm-up left out, that stops early
when the server keeps failing, so a dead server ends the run in bounded time."""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass

from siliconbench.core.kit.serving_apis import (
    PREFIXES,
    Ask,
    Timeline,
    get_json,
    one_request,
)
from siliconbench.core.kit.serving_http import Limits, ServerFault, Target, fetch
from siliconbench.core.params import ParamError

# Words that most tokenizers keep whole, each with its leading space: a prompt of N of them
# is about N tokens (the record keeps the count the server gives).
WORDS = ("the of and to in is was for on are with as by at from this that be have not or "
         "one all were which when there can an use each more some time will way about many "
         "then them write would like so these her long make thing see him two has look "
         "day could go come did number sound most people over know water than call first "
         "who may down side been now find any new work part take get place made live where "
         "after back little only round man year came show every good me give our under "
         "name very through just form great think say help low line before turn cause same "
         "mean differ move right boy old too does tell set three want air well also play "
         "small end put home read hand port large spell add even land here must big high "
         "such follow act why ask men change went light kind off need house picture try us "
         "again animal point mother world near build self earth father head stand own page "
         "should country found answer school grow study still learn plant cover food sun "
         "four thought let keep eye never last door between city tree cross since hard "
         "start might story saw far sea draw left late run while press close night real "
         "life few stop open seem together next white children begin got walk example ease "
         "paper often always music those both mark book letter until mile river car feet "
         "care second group carry took rain eat room friend began idea fish mountain north "
         "once base hear horse cut sure watch color face wood main enough plain girl usual "
         "young ready above ever red list though feel talk bird soon body dog family direct "
         "pose leave song measure state product black short numeral class wind question "
         "happen complete ship area half rock order fire south problem piece told knew pass "
         "farm top whole king size heard best hour better true during hundred am remember "
         "step early hold west ground interest reach fast five sing listen six table travel "
         "less morning ten simple several vowel toward war lay against pattern slow center "
         "love person money serve appear road map science rule govern pull cold notice "
         "voice fall power town fine certain fly unit lead cry dark machine note wait plan "
         "figure star box noun field rest correct able pound done beauty drive stood "
         "contain front teach week final gave green oh quick develop sleep warm free minute "
         "strong special mind behind clear tail produce fact street inch lot nothing course "
         "stay wheel full force blue object decide surface deep moon island foot yet busy "
         "test record boat common gold possible plane age dry wonder laugh thousand ago ran "
         "check game shape yes hot miss brought heat snow bed bring sit perhaps fill east "
         "weight language among").split()
# A warm-cache prompt's own tail after the shared prefix: enough to differ per request.
WARM_TAIL = 16
# A level stops after this many failures in a row: the server is down or refusing.
FAILURES_IN_A_ROW = 5


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


class Prompts:
    """The run's prompts: `tokens` words long, from `seed`. Cold: each starts with a salt no
    earlier request had (`nonce`, made once per run, and its index), so no prefix cache can
    serve it. Warm: a shared prefix of all but WARM_TAIL words, then a tail of its own."""

    def __init__(self, tokens: int, seed: int, nonce: str) -> None:
        self.tokens, self.seed, self.nonce = tokens, seed, nonce
        self.count = 0
        tail = min(WARM_TAIL, max(1, tokens // 4))
        self.prefix = words(random.Random(seed), max(0, tokens - tail))
        self.tail = tail

    def cold(self) -> str:
        self.count += 1
        rng = random.Random(f"{self.seed}/{self.count}")
        # Its first characters already differ from every other prompt's: a salt in
        # brackets, or the run's nonce first, would be a prefix all of them share (mlx_lm
        # reported 10 cached tokens of each "cold" prompt).
        salt = hashlib.sha256(f"{self.nonce}-{self.count}".encode()).hexdigest()[:12]
        return f"{salt} {words(rng, max(1, self.tokens - 1))}"

    def warm(self) -> str:
        self.count += 1
        rng = random.Random(f"{self.seed}/warm/{self.count}")
        return f"{self.prefix} [{self.nonce}-{self.count}] {words(rng, self.tail)}"

    def primer(self) -> str:
        return f"{self.prefix} {words(random.Random(self.seed + 1), self.tail)}"


@dataclass
class Server:
    """What the server said of itself: its API, models, and name and version where given."""
    api: str
    models: list[str]
    name: str | None = None
    version: str | None = None


async def detect(target: Target, api: str, api_key: str | None) -> Server:
    """The API at `target` (`api` "auto": LM Studio's native, Ollama's, then OpenAI's; a URL
    ending in one's prefix names it), its models and its name; ParamError (one sentence)
    where no API answers."""
    order = [api] if api != "auto" else ["lmstudio", "ollama", "openai"]
    for candidate in order:
        server = await _ask(target, candidate, api_key)
        if server is not None:
            return server
    tried = " or ".join(f"{target.url(PREFIXES[a])}" for a in order)
    raise ParamError(f"No {'serving API' if api == 'auto' else api + ' API'} answers at "
                     f"{target.origin}: tried {tried}.")


async def _ask(target: Target, api: str, api_key: str | None) -> Server | None:
    if api == "ollama":
        version = await get_json(target, "/api/version", api_key)
        tags = await get_json(target, "/api/tags", api_key)
        if not isinstance(tags, dict) or not isinstance(tags.get("models"), list):
            return None
        models = [m.get("name") or m.get("model") for m in tags["models"] if isinstance(m, dict)]
        v = version.get("version") if isinstance(version, dict) else None
        return Server("ollama", _names(models), "Ollama", _short(v))
    listing = await get_json(target, PREFIXES[api] + "/models", api_key)
    if not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
        return None
    data = [m for m in listing["data"] if isinstance(m, dict) and m.get("id")]
    if api == "lmstudio":    # loaded models first: those answer without a load
        data.sort(key=lambda m: m.get("state") != "loaded")
        data = [m for m in data if m.get("type", "llm") in ("llm", "vlm")]
    name = await _server_header(target, PREFIXES[api] + "/models", api_key)
    return Server(api, _names([m["id"] for m in data]), name or
                  ("LM Studio" if api == "lmstudio" else None))


MAX_MODELS = 1000
MAX_NAME = 200


def _names(listed: list) -> list[str]:
    """The model names a server listed that a record can hold and a person can read: text
    of at most MAX_NAME characters without control characters, the first MAX_MODELS (a
    hostile server's list is not copied into the record)."""
    from siliconbench.core.text import without_controls
    return [m for m in listed if isinstance(m, str) and 0 < len(m) <= MAX_NAME
            and without_controls(m, keep="") == m][:MAX_MODELS]


async def _server_header(target: Target, path: str, api_key: str | None) -> str | None:
    from siliconbench.core.kit.serving_apis import auth_headers
    try:
        response, _ = await fetch(target, "GET", path, headers=auth_headers(api_key))
    except ServerFault:
        return None
    return _short((response.headers or {}).get("server"))


def _short(text) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    from siliconbench.core.text import clip, without_controls
    return clip(without_controls(text.strip(), keep=""), 60)


def choose_model(server: Server, wanted: str | None) -> str:
    if wanted:
        if server.models and wanted not in server.models:
            from siliconbench.core.params import closest
            hint = closest(wanted, server.models)
            raise ParamError(f"The server has no model {wanted!r}"
                             + (f"; did you mean {hint}?" if hint else
                                f"; it lists {', '.join(server.models[:5])}."))
        return wanted
    if not server.models:
        raise ParamError("The server lists no model; name one with --model.")
    return server.models[0]


@dataclass
class Plan:
    """One level's load."""
    concurrency: int
    requests: int
    warmup: int
    cache: str                   # cold | warm
    rate: float | None = None    # measured requests arriving at random (Poisson), per second
    seed: int = 0                # the arrivals' seed


async def run_level(target: Target, api: str, plan: Plan, prompts: Prompts,
                    make_ask: Callable[[str], Ask], limits: Limits, api_key: str | None,
                    progress: Callable[[int, int], None] | None = None
                    ) -> tuple[list[Timeline], str | None]:
    """The level's measured requests (warm-up left out) and why it stopped early, if it
    did. Closed loop: `concurrency` workers, each sending its next request when its last
    one ended, warm-up first (all of it ended before the measured ones start). With a
    `rate`, the measured requests arrive at random times instead (exponential gaps from
    `seed`), at most `concurrency` in flight: an arrival finding them all busy waits."""
    prompt = prompts.warm if plan.cache == "warm" else prompts.cold

    async def phase(count: int, lines: list[Timeline], rate: float | None = None
                    ) -> str | None:
        issued = 0
        in_a_row = 0
        stop: list[str] = []
        loop = asyncio.get_running_loop()
        start = loop.time()
        arrivals = []
        if rate:
            rng, t = random.Random(plan.seed), 0.0
            for _ in range(count):
                arrivals.append(t)
                t += rng.expovariate(rate)

        async def worker() -> None:
            nonlocal issued, in_a_row
            while issued < count and not stop:
                issued += 1
                if arrivals:
                    await asyncio.sleep(max(0.0, start + arrivals[issued - 1] - loop.time()))
                line = await one_request(target, api, make_ask(prompt()), limits, api_key)
                lines.append(line)
                in_a_row = 0 if line.ok else in_a_row + 1
                if in_a_row >= FAILURES_IN_A_ROW and not stop:
                    stop.append(f"{in_a_row} requests in a row failed, the last: "
                                f"{line.reason}")
                if progress:
                    progress(len(lines), count)
        await asyncio.gather(*(worker() for _ in range(min(plan.concurrency, count))))
        return stop[0] if stop else None

    warm: list[Timeline] = []
    if plan.warmup:
        stopped = await phase(plan.warmup, warm)
        if stopped:
            return [], f"stopped in its warm-up: {stopped}"
    lines: list[Timeline] = []
    stopped = await phase(plan.requests, lines, plan.rate)
    return lines, stopped


async def prime(target: Target, api: str, prompts: Prompts, make_ask: Callable[[str], Ask],
                limits: Limits, api_key: str | None) -> Timeline:
    """The warm cache's one priming request: the shared prefix, once."""
    return await one_request(target, api, make_ask(prompts.primer()), limits, api_key)

