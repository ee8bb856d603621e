/**
 * An OpenTelemetry `TracerProvider` (`@opentelemetry/api`): the SDK's, or `trace.getTracerProvider()`. Declared here
 * by its shape, so that the package's types need no `@opentelemetry/api`.
 */
export interface TelemetryTracerProvider {
  getTracer(name: string, version?: string, options?: object): object;
}

/** An OpenTelemetry `MeterProvider` (`@opentelemetry/api`): the SDK's, or `metrics.getMeterProvider()`. */
export interface TelemetryMeterProvider {
  getMeter(name: string, version?: string, options?: object): object;
}

/** Where spans and metric points go; each option defaults to the provider registered with `@opentelemetry/api`. */
export interface TelemetryOptions {
  /** Where spans go. Default: the provider registered with `@opentelemetry/api` (none: no spans). */
  tracerProvider?: TelemetryTracerProvider;
  /** Where metric points go. Default: the provider registered with `@opentelemetry/api` (none: no points). */
  meterProvider?: TelemetryMeterProvider;
}
