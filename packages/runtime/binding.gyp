{
  "targets": [
    {
      "target_name": "runx_sha256",
      "sources": ["native/sha256.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
