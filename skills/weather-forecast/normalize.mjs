// Turns the provider's forecast document into the forecast packet, keeping only periods the
// provider returned (nothing is invented) and recording the evidence the answer rests on.
const text = (value) => (typeof value === "string" ? value : "");

export default function normalize({ request, execution }) {
  const response = execution?.responses?.[0];
  if (response === undefined || response.ok !== true) {
    throw new Error(
      `the forecast provider answered ${response?.status ?? "nothing"}; no forecast without evidence`,
    );
  }
  const raw = response.json?.properties?.periods;
  if (!Array.isArray(raw) || raw.length === 0) {
    throw new Error("the provider's forecast has no periods; no forecast without evidence");
  }
  const periods = raw.slice(0, request.periods).map((p) => ({
    name: text(p.name),
    start_time: text(p.startTime),
    end_time: text(p.endTime),
    temperature: { value: p.temperature ?? null, unit: text(p.temperatureUnit) },
    wind: `${text(p.windSpeed)} ${text(p.windDirection)}`.trim(),
    summary: text(p.shortForecast),
  }));
  return {
    decision: "ready",
    location: request.location,
    forecast_packet: {
      provider: "api.weather.gov",
      updated: text(response.json?.properties?.updated),
      periods,
    },
    provider_evidence: {
      request_id: response.id,
      status: response.status,
      body_digest: response.body_digest,
      periods_returned: raw.length,
      periods_kept: periods.length,
    },
    safety_notes: ["A forecast is guidance for planning; official alerts govern safety decisions."],
  };
}
