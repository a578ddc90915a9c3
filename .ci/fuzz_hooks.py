"""schemathesis hooks of .ci/fuzz.sh: authenticate every operation as its callers do, and
keep the fuzzing key from revoking itself.

The management API takes the `all` API key; enrolling a device takes an auth key; the rest
of the node protocol takes the credential of a device enrolled before the run. Every other
destructive call is fuzzed, deleting other keys included; only a DELETE of the very key the
run authenticates with is turned into one of a key that does not exist, or the rest of the
run would be 401s.
"""
import os

import schemathesis

API_KEY = os.environ["WARREN_FUZZ_API_KEY"]
KEY_ID = os.environ["WARREN_FUZZ_KEY_ID"]
AUTH_KEY = os.environ["WARREN_FUZZ_AUTH_KEY"]
NODE_TOKEN = os.environ["WARREN_FUZZ_NODE_TOKEN"]


class Bearer:
    token = ""

    def get(self, case, context):
        return self.token

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


@schemathesis.auth(retry_on=[]).apply_to(path="/v1/node/register")
class AuthKey(Bearer):
    token = AUTH_KEY


@schemathesis.auth(retry_on=[]).apply_to(path_regex="^/v1/node/")
class NodeCredential(Bearer):
    token = NODE_TOKEN


@schemathesis.auth(retry_on=[]).skip_for(path_regex="^/v1/node/")
class ApiKey(Bearer):
    token = API_KEY


@schemathesis.hook
def before_call(context, case, kwargs):
    """Every phase, the stateful one included (it takes ids from earlier responses), goes
    through here: a DELETE of the fuzzing key's own id is sent for an id that does not exist."""
    if case.method.upper() == "DELETE" and case.path == "/v1/keys/{id}" and (case.path_parameters or {}).get("id") == KEY_ID:
        case.path_parameters = {**case.path_parameters, "id": "key_00000000000000000000"}
