// Admits a forecast request: a National Weather Service gridpoint and a bounded number of
// periods. Pure: the provider is contacted only by the graph's http.read step, and only when
// this decides `ready`.
const GRIDPOINT = /^([A-Z]{3})\/(\d{1,3}),(\d{1,3})$/;

export default function locate({ location, periods, purpose }) {
  const blockers = [];
  const match = GRIDPOINT.exec(typeof location === "string" ? location.trim() : "");
  if (match === null) {
    blockers.push({
      code: "location_invalid",
      message: "location must be an NWS gridpoint OFFICE/X,Y, e.g. TOP/31,80",
    });
  }
  if (!Number.isInteger(periods) || periods < 1 || periods > 14) {
    blockers.push({
      code: "periods_out_of_range",
      message: "periods must be an integer from 1 to 14",
    });
  }
  if (purpose === "life_safety") {
    blockers.push({
      code: "life_safety_refused",
      message: "a forecast summary is not a safety decision; use official warnings and alerts",
    });
  }
  return {
    request: {
      decision: blockers.length === 0 ? "ready" : "refused",
      location: typeof location === "string" ? location.trim() : "",
      office: match?.[1] ?? "",
      grid_x: match === null ? 0 : Number(match[2]),
      grid_y: match === null ? 0 : Number(match[3]),
      periods,
      purpose,
      blockers,
    },
  };
}
