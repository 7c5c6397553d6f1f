"""A KServe v2 (Open Inference Protocol) HTTP/REST client written from the
protocol's specification and Triton's binary-data extension, using only the
Python standard library (http.client, json, struct): no ged code, no
numpy. Tensors are (datatype, shape, flat list of values); BYTES values are
bytes (binary form) or str (JSON form)."""

import http.client
import json
import struct

# struct formats of the fixed-size datatypes (little-endian).
FORMATS = {"BOOL": "?", "UINT8": "B", "UINT16": "H", "UINT32": "I", "UINT64": "Q", "INT8": "b", "INT16": "h",
           "INT32": "i", "INT64": "q", "FP16": "e", "FP32": "f", "FP64": "d"}


def count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def to_binary(datatype, values):
    """The raw form of a flat list of values."""
    if datatype == "BYTES":
        out = b""
        for v in values:
            v = v.encode() if isinstance(v, str) else v
            out += struct.pack("<I", len(v)) + v
        return out
    return struct.pack("<%d%s" % (len(values), FORMATS[datatype]), *values)


def from_binary(datatype, shape, raw):
    if datatype == "BYTES":
        items, at = [], 0
        while at < len(raw):
            (n,) = struct.unpack_from("<I", raw, at)
            items.append(raw[at + 4:at + 4 + n])
            at += 4 + n
        assert len(items) == count(shape), (len(items), shape)
        return items
    return list(struct.unpack("<%d%s" % (count(shape), FORMATS[datatype]), raw))


class HttpError(Exception):
    def __init__(self, status, message):
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class Client:
    """One keep-alive connection (not for sharing between threads)."""

    def __init__(self, address, token=None, timeout=60):
        host, port = address.rsplit(":", 1)
        self.conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
        self.token = token

    def close(self):
        self.conn.close()

    def send(self, method, path, body=None, headers=None):
        """(status, headers as a dict with lowercase names, body bytes)."""
        headers = dict(headers or {})
        if self.token is not None:
            headers["Authorization"] = "Bearer " + self.token
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def call(self, method, path, payload=None, ok=(200,)):
        """A JSON request; its JSON reply, or HttpError with the reply's error."""
        body = None if payload is None else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        status, _, data = self.send(method, path, body, headers)
        reply = json.loads(data) if data else None
        if status not in ok:
            raise HttpError(status, reply.get("error") if isinstance(reply, dict) else data)
        return reply

    def get(self, path, ok=(200,)):
        return self.call("GET", path, ok=ok)

    def post(self, path, payload=None, ok=(200,)):
        return self.call("POST", path, payload, ok=ok)

    @staticmethod
    def model_path(model, version=None):
        return f"/v2/models/{model}" + (f"/versions/{version}" if version else "")

    def infer(self, model, inputs, outputs=None, version=None, binary_inputs=False, binary_output=False,
              request_id=None, nested=None, raw_parameters=None):
        """inputs: name -> (datatype, shape, flat values); outputs: names, or
        name -> bool (binary_data) for each wanted output. `nested`: an
        input name whose JSON data is sent nested to its shape. Returns
        (reply JSON, name -> (datatype, shape, flat values))."""
        request = {"inputs": []}
        if request_id is not None:
            request["id"] = request_id
        parameters = dict(raw_parameters or {})
        if binary_output:
            parameters["binary_data_output"] = True
        if parameters:
            request["parameters"] = parameters
        blobs = []
        for name, (datatype, shape, values) in inputs.items():
            tensor = {"name": name, "datatype": datatype, "shape": list(shape)}
            if binary_inputs:
                blob = to_binary(datatype, values)
                tensor["parameters"] = {"binary_data_size": len(blob)}
                blobs.append(blob)
            else:
                data = [v.decode() if isinstance(v, bytes) else v for v in values]
                tensor["data"] = nest(data, shape) if name == nested else data
            request["inputs"].append(tensor)
        if outputs is not None:
            wanted = outputs.items() if isinstance(outputs, dict) else ((n, None) for n in outputs)
            request["outputs"] = [{"name": n} if b is None else {"name": n, "parameters": {"binary_data": b}}
                                  for n, b in wanted]
        header = json.dumps(request).encode()
        headers = {"Content-Type": "application/octet-stream" if blobs else "application/json"}
        if blobs:
            headers["Inference-Header-Content-Length"] = str(len(header))
        status, reply_headers, data = self.send("POST", self.model_path(model, version) + "/infer",
                                                header + b"".join(blobs), headers)
        length = reply_headers.get("inference-header-content-length")
        json_part = data if length is None else data[:int(length)]
        reply = json.loads(json_part)
        if status != 200:
            raise HttpError(status, reply.get("error"))
        at = 0 if length is None else int(length)
        tensors = {}
        for o in reply["outputs"]:
            size = o.get("parameters", {}).get("binary_data_size")
            if size is None:
                tensors[o["name"]] = (o["datatype"], o["shape"], o["data"])
            else:
                tensors[o["name"]] = (o["datatype"], o["shape"], from_binary(o["datatype"], o["shape"],
                                                                             data[at:at + size]))
                at += size
        assert at == (len(data) if length is not None else 0), "binary data left over"
        return reply, tensors


def nest(flat, shape):
    """A flat list as nested lists of `shape`."""
    if len(shape) <= 1:
        return list(flat)
    step = count(shape[1:])
    return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
