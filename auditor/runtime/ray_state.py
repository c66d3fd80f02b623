"""Census of a Ray cluster's actors and nodes through Ray's state, never the process tree.

On a cluster, rollout actors are children of other nodes' raylets, so the launching
script's process tree shows nothing useful. Two ways to read Ray's state, same result:

- ``HttpState``: the dashboard's state endpoint (``/api/v0/actors``, ``/api/v0/nodes``) with
  plain urllib and no ``import ray`` (answered in about 10 ms here). Used when reachable.
- ``GcsState``: the GCS tables through Ray's own Python client, when ``ray`` is importable
  and the dashboard is not running (``include_dashboard=False``). Ray's public Python state
  API (``ray.util.state``) itself goes through the dashboard, so it is no fallback.

Both return a ``Snapshot`` of plain ``Actor`` and ``Node`` rows.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field

PENDING_STATES = ("DEPENDENCIES_UNREADY", "PENDING_CREATION")
DEFAULT_DASHBOARD_PORT = 8265
HTTP_TIMEOUT_S = 3.0
LIST_LIMIT = 10000  # the state API truncates at 100 by default
FORCE_ENV = "QG_AUDIT_RAY_STATE"  # "http" or "gcs": force one backend (troubleshooting)


class RayStateError(Exception):
    """Ray's state could not be read; the message says where and what to try."""


@dataclass
class Actor:
    actor_id: str
    class_name: str
    state: str  # ALIVE, PENDING_CREATION, DEPENDENCIES_UNREADY, RESTARTING, DEAD
    pid: int | None
    node_id: str | None
    resources: dict = field(default_factory=dict)  # required_resources: {"CPU": 1.0}
    job_id: str = ""
    name: str = ""
    placement_group_id: str | None = None
    death: str | None = None  # why it died, when Ray says

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Node:
    node_id: str
    ip: str
    alive: bool
    head: bool
    resources: dict = field(default_factory=dict)  # resources_total

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Snapshot:
    actors: list[Actor]
    nodes: list[Node]
    via: str  # "http" or "gcs"
    cost_ms: float


def ray_importable() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


# ---------------------------------------------------------------- address resolution

def current_cluster_file() -> str:
    base = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    return os.path.join(base, "ray", "ray_current_cluster")


def find_gcs_address(spec: str) -> str | None:
    """``auto`` -> RAY_ADDRESS or the last cluster started on this machine; else SPEC itself."""
    if spec != "auto":
        return spec
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env and env not in ("auto", "local"):
        return env
    try:
        with open(current_cluster_file(), encoding="utf-8") as f:
            address = f.read().strip()
        if address and tcp_reachable(address):
            return address
    except OSError:
        pass
    return _latest_local_session()


def _latest_local_session() -> str | None:
    """A Ray that a script started with ray.init() writes no ray_current_cluster file, but
    its session directory names the GCS port (``session_latest/gcs_server_port_NODEID``)."""
    import glob
    import socket

    session = os.path.join(os.path.dirname(current_cluster_file()), "session_latest")
    for path in glob.glob(os.path.join(session, "gcs_server_port_*")):
        try:
            with open(path, encoding="utf-8") as f:
                port = int(f.read().strip())
        except (OSError, ValueError):
            continue
        hosts = ["127.0.0.1"]
        try:
            hosts.append(socket.gethostbyname(socket.gethostname()))
        except OSError:
            pass
        for host in hosts:
            if tcp_reachable(f"{host}:{port}", timeout=0.5):
                return f"{host}:{port}"
    return None


def tcp_reachable(address: str, timeout: float = 2.0) -> bool:
    """A plain TCP connect first: Ray's own client retries an absent GCS for about a minute."""
    import socket

    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def auth_token() -> str | None:
    """Ray's token for clusters with token authentication (default for a local ray.init() since
    Ray 2.5x): RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH, or ~/.ray/auth_token, as Ray itself looks."""
    token = os.environ.get("RAY_AUTH_TOKEN", "").strip()
    if token:
        return token
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.join(os.path.expanduser("~"), ".ray", "auth_token")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() or None
    except OSError:
        return None


_auth_ready = False


def prepare_gcs_auth() -> None:
    """Let Ray's GCS client in this process send the token when one exists (a cluster without
    authentication ignores it). The environment is restored so that a target launched later
    starts Ray exactly as it would without qg-audit."""
    global _auth_ready
    if _auth_ready or not auth_token():
        return
    saved = os.environ.get("RAY_AUTH_MODE")
    try:
        import logging

        from ray._private.authentication import authentication_token_setup as setup

        logging.getLogger(setup.__name__).setLevel(logging.ERROR)  # its "token auth enabled" warning
        setup.maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
    except Exception:  # an older Ray without token authentication
        pass
    finally:
        if saved is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = saved
    _auth_ready = True


def dashboard_from_gcs(gcs_address: str) -> str | None:
    """The dashboard URL the cluster itself registered (needs ray), else None."""
    if not ray_importable():
        return None
    try:
        from ray._raylet import GcsClient

        prepare_gcs_auth()
        value = GcsClient(address=gcs_address).internal_kv_get(b"dashboard", b"dashboard")
    except Exception:  # GCS unreachable or an API change: the caller falls back
        return None
    if not value:
        return None
    value = value.decode()
    return value if value.startswith("http") else f"http://{value}"


# ---------------------------------------------------------------- backends

class HttpState:
    """The dashboard's state endpoint, standard library only."""

    via = "http"

    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def _get(self, resource: str) -> list[dict]:
        query = urllib.parse.urlencode({"limit": LIST_LIMIT, "detail": "1"})
        url = f"{self.url}/api/v0/{resource}?{query}"
        request = urllib.request.Request(url)
        token = auth_token()
        if token:  # a dashboard without authentication ignores it
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as resp:
                body = json.load(resp)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise RayStateError(f"{url}: {getattr(exc, 'reason', exc)}") from None
        try:
            return body["data"]["result"]["result"]
        except (KeyError, TypeError):
            raise RayStateError(f"{url}: unexpected answer (not Ray's state API): {str(body)[:120]}") from None

    def snapshot(self) -> Snapshot:
        t = time.perf_counter()
        actors = [_actor_from_http(a) for a in self._get("actors")]
        nodes = [_node_from_http(n) for n in self._get("nodes")]
        return Snapshot(actors, nodes, self.via, (time.perf_counter() - t) * 1000)


def _actor_from_http(a: dict) -> Actor:
    death = a.get("death_cause")
    return Actor(
        actor_id=a.get("actor_id") or "", class_name=a.get("class_name") or "", state=a.get("state") or "",
        pid=a.get("pid") or None, node_id=a.get("node_id") or None,
        resources=dict(a.get("required_resources") or {}), job_id=a.get("job_id") or "",
        name=a.get("name") or "", placement_group_id=a.get("placement_group_id") or None,
        death=_death_text(death) if death else None,
    )


def _death_text(death) -> str:
    if isinstance(death, dict):
        for ctx in death.values():
            if isinstance(ctx, dict) and ctx.get("error_message"):
                return str(ctx["error_message"]).strip().splitlines()[0][:300]
        return json.dumps(death)[:300]
    return str(death)[:300]


def _node_from_http(n: dict) -> Node:
    return Node(node_id=n.get("node_id") or "", ip=n.get("node_ip") or "", alive=n.get("state") == "ALIVE",
                head=bool(n.get("is_head_node")), resources=dict(n.get("resources_total") or {}))


class GcsState:
    """The GCS actor and node tables through Ray's Python client (no dashboard needed)."""

    via = "gcs"

    def __init__(self, gcs_address: str):
        self.address = gcs_address
        try:
            from ray._raylet import GcsClient, GcsClientOptions, GlobalStateAccessor

            prepare_gcs_auth()
            options = GcsClientOptions.create(gcs_address, None, allow_cluster_id_nil=True,
                                              fetch_cluster_id_if_nil=False)
            self._accessor = GlobalStateAccessor(options)
            if not self._accessor.connect():
                raise RayStateError(f"{gcs_address}: could not connect to Ray's GCS")
            self._client = GcsClient(address=gcs_address)
        except RayStateError:
            raise
        except Exception as exc:  # ray's private client: name the failure, never crash
            raise RayStateError(f"{gcs_address}: cannot read Ray's GCS: {exc}") from None

    def snapshot(self) -> Snapshot:
        from ray.core.generated import gcs_pb2

        t = time.perf_counter()
        if not tcp_reachable(self.address, timeout=1.0):  # never block in Ray's client on a dead GCS
            raise RayStateError(f"{self.address}: the Ray GCS stopped answering")
        try:
            raw_actors = self._accessor.get_actor_table(None, None)
            raw_nodes = self._client.get_all_node_info().values()
        except Exception as exc:
            raise RayStateError(f"{self.address}: reading Ray's GCS failed: {exc}") from None
        actors = []
        for raw in raw_actors:
            d = gcs_pb2.ActorTableData.FromString(raw)
            node = d.address.node_id.hex() or d.node_id.hex()
            death = None
            if d.HasField("death_cause"):
                kind = d.death_cause.WhichOneof("context")
                msg = getattr(getattr(d.death_cause, kind), "error_message", "") if kind else ""
                death = (msg.strip().splitlines()[0][:300] if msg.strip() else kind) or None
            actors.append(Actor(
                actor_id=d.actor_id.hex(), class_name=d.class_name,
                state=gcs_pb2.ActorTableData.ActorState.Name(d.state), pid=d.pid or None,
                node_id=node or None, resources=dict(d.required_resources), job_id=d.job_id.hex(),
                name=d.name, placement_group_id=d.placement_group_id.hex() or None, death=death,
            ))
        nodes = [Node(node_id=n.node_id.hex(), ip=n.node_manager_address,
                      alive=gcs_pb2.GcsNodeInfo.GcsNodeState.Name(n.state) == "ALIVE",
                      head=n.is_head_node, resources=dict(n.resources_total)) for n in raw_nodes]
        return Snapshot(actors, nodes, self.via, (time.perf_counter() - t) * 1000)


def connect(spec: str) -> tuple[HttpState | GcsState, str | None, str | None]:
    """Open the best state backend for ``--ray SPEC``: (backend, gcs_address, dashboard_url).

    Raises RayStateError when no cluster answers; the message names what was tried.
    """
    if spec.startswith("ray://"):
        raise RayStateError(f"{spec}: Ray Client addresses are not supported; give the GCS address "
                            f"(HOST:6379) or the dashboard URL (http://HOST:8265)")
    force = os.environ.get(FORCE_ENV, "")
    tried = []
    if spec.startswith(("http://", "https://")):
        gcs, urls = None, [spec]
    else:
        gcs = find_gcs_address(spec)
        if gcs is None:
            raise RayStateError(f"--ray {spec}: no running Ray cluster found (RAY_ADDRESS is unset and "
                                f"{current_cluster_file()} does not exist); pass --ray HOST:PORT")
        if not tcp_reachable(gcs):
            raise RayStateError(f"nothing answers at {gcs} (the Ray GCS address"
                                + (f" from {current_cluster_file()}" if spec == "auto" else "") + ")")
        registered = dashboard_from_gcs(gcs)
        host = gcs.rsplit(":", 1)[0]
        urls = [u for u in (registered, f"http://{host}:{DEFAULT_DASHBOARD_PORT}") if u]
    if force != "gcs":
        for url in dict.fromkeys(urls):
            backend = HttpState(url)
            try:
                backend._get("nodes")
                return backend, gcs, url
            except RayStateError as exc:
                tried.append(str(exc))
    if gcs and force != "http":
        if ray_importable():
            try:
                return GcsState(gcs), gcs, None
            except RayStateError as exc:
                tried.append(str(exc))
        else:
            tried.append(f"{gcs}: reading the GCS directly needs ray (pip install 'qg-audit[ray]')")
    raise RayStateError("cannot read Ray's state: " + "; ".join(tried or ["nothing to try"]))
