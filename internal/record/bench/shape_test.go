package bench

import "testing"

// The JSON shape `bench -o json` prints and bench.json holds is a contract
// for tools that collect it across a fleet: keys must not drift.
func TestJSONShape(t *testing.T) {
	rep := Report{Services: 1000, Kernel: "6.18.44", MeasuredAt: "2026-11-30T16:40:00Z",
		Tools: []Tool{{Name: "nft", Path: "/usr/sbin/nft", Version: "nftables v1.0.6 (Lester Gooch #5)", Size: 10, ModTimeNs: 20}},
		Results: []Result{{Backend: "nftables", Steps: []Step{
			{Step: StepFull, WallSeconds: 1.25, UserSeconds: 0.5, SysSeconds: 0.25, Rules: 12000},
			{Step: StepPartial, WallSeconds: 0.125, UserSeconds: 0.0625, SysSeconds: 0.03125, Rules: 8},
		}}},
		Skipped: []Skipped{{Backend: "iptables-legacy", Reason: "the kernel has no legacy xtables"}},
	}
	got, err := Encode(rep)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{
  "schema": 1,
  "services": 1000,
  "kernel": "6.18.44",
  "measured_at": "2026-11-30T16:40:00Z",
  "tools": [
    {
      "name": "nft",
      "path": "/usr/sbin/nft",
      "version": "nftables v1.0.6 (Lester Gooch #5)",
      "size": 10,
      "mtime_ns": 20
    }
  ],
  "results": [
    {
      "backend": "nftables",
      "steps": [
        {
          "step": "full",
          "wall_seconds": 1.25,
          "user_seconds": 0.5,
          "sys_seconds": 0.25,
          "rules": 12000
        },
        {
          "step": "partial",
          "wall_seconds": 0.125,
          "user_seconds": 0.0625,
          "sys_seconds": 0.03125,
          "rules": 8
        }
      ]
    }
  ],
  "skipped": [
    {
      "backend": "iptables-legacy",
      "reason": "the kernel has no legacy xtables"
    }
  ]
}
`
	if string(got) != want {
		t.Errorf("bench JSON shape changed:\n%s", got)
	}
	back, err := Parse(got)
	if err != nil || back.Services != 1000 || len(back.Results) != 1 {
		t.Errorf("the state file does not read back: %+v, %v", back, err)
	}
}
